// Where the process is in its life, for everything that must know: /readyz answers 503 while the
// process drains (a load balancer then sends new work elsewhere), and the shutdown path sets it. One
// object per service (Service.lifecycle), created by the composition root and handed to whoever reads it.
export class Lifecycle {
  private drainingSince?: number;

  /** True once the process stopped taking new work (SIGTERM drain, shutdown). */
  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** From now on the process is draining; idempotent. */
  startDraining(): void {
    this.drainingSince ??= Date.now();
  }
}
