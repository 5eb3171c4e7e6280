// The estimated start of a queued run (docs/queues.md, "Position and estimated start"), from where it
// stands and how long runs take. Two bounds, the later of each kept: the pool's slots free one by one,
// each once per run's duration, so it starts once `position + 1` have freed; and its own group, when
// it has runs in flight (its share now), starts its runs ahead of it at that pace. The upper bound
// allows one release more than the runs counted ahead: a run posted meanwhile that the rule puts
// first (another group below its share) takes a slot the position could not foresee.

export interface Standing {
  /** Runs the rule starts before it. */
  position: number;
  /** Of those, its own group's (same class, older). */
  own: number;
  /** The pool's slots: the maxParallel of the project's open sessions. */
  slots: number;
  /** Its group's runs in flight now. */
  groupInFlight: number;
}

/** Offsets from now (ms) between which it should start, from the quick and slow run durations; undefined without slots. */
export function startWithin(standing: Standing, quick: number, slow: number): { from: number; to: number } | undefined {
  const { position, own, slots, groupInFlight } = standing;
  if (slots <= 0) return undefined;
  let from = (position * quick) / slots;
  let to = ((position + 2) * slow) / slots;
  if (groupInFlight > 0) {
    from = Math.max(from, (own * quick) / groupInFlight);
    to = Math.max(to, ((own + 2) * slow) / groupInFlight);
  }
  return { from, to };
}
