// Where the engine is in its stop: what every part that claims, starts or accepts reads, and only
// Shutdown (shutdown.ts) changes.
export class Phase {
  /** No run is claimed any more (from the first signal on); /readyz reports not ready. */
  draining = false;
  /** Past the drain: a new socket is closed at once (1001), a claimed run goes back to the queue. */
  stopping = false;
}
