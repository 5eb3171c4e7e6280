// What `otp run` says of a run that waits in the queue (docs/queues.md): how many runs start before it
// and when it should start, e.g. "queued: 4 ahead, starts in about 2-3 min" (the words of the estimate
// are the console's too: otp/queue/words.ts).

import { startsIn } from '../otp/queue/words.js';

/** A queued run's standing, as GET /otp/runs/{id} answers it. */
export interface QueueStanding {
  position: number;
  estimatedStart: { from: string; to: string } | null;
}

export function queueLine(queue: QueueStanding, now: number): string {
  const ahead = queue.position === 0 ? 'next' : `${queue.position} ahead`;
  if (!queue.estimatedStart) return `queued: ${ahead} (no estimate yet: no executor, or no finished run to go by)`;
  return `queued: ${ahead}, starts ${startsIn(queue.estimatedStart, now)}`;
}
