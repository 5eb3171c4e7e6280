// How a queued run's estimated start is said to people, the same in `otp run` and the console
// (docs/queues.md): "in under a minute", "in about 2-3 min".

const MINUTE = 60_000;

/** When a run should start, from its estimated start (ISO times) as seen at `now` (ms). */
export function startsIn(estimatedStart: { from: string; to: string }, now: number): string {
  const soonest = Math.max(0, Date.parse(estimatedStart.from) - now);
  const latest = Math.max(soonest, Date.parse(estimatedStart.to) - now);
  if (latest < MINUTE) return 'in under a minute';
  const low = Math.max(1, Math.round(soonest / MINUTE));
  const high = Math.max(low, Math.round(latest / MINUTE));
  return `in about ${low === high ? low : `${low}-${high}`} min`;
}
