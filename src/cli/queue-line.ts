// What `otp run` says of a run that waits in the queue (docs/queues.md): how many runs start before it
// and when it should start, e.g. "queued: 4 ahead, starts in about 2-3 min".

/** A queued run's standing, as GET /otp/runs/{id} answers it. */
export interface QueueStanding {
  position: number;
  estimatedStart: { from: string; to: string } | null;
}

const MINUTE = 60_000;

export function queueLine(queue: QueueStanding, now: number): string {
  const ahead = queue.position === 0 ? 'next' : `${queue.position} ahead`;
  if (!queue.estimatedStart) return `queued: ${ahead} (no estimate yet: no executor, or no finished run to go by)`;
  const soonest = Math.max(0, Date.parse(queue.estimatedStart.from) - now);
  const latest = Math.max(soonest, Date.parse(queue.estimatedStart.to) - now);
  if (latest < MINUTE) return `queued: ${ahead}, starts in under a minute`;
  const low = Math.max(1, Math.round(soonest / MINUTE));
  const high = Math.max(low, Math.round(latest / MINUTE));
  return `queued: ${ahead}, starts in about ${low === high ? low : `${low}-${high}`} min`;
}
