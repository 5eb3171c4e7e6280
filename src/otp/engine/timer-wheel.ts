// The run actors' clock (XState's `clock` option): the run machine's named delay `stepTimeout` is
// scheduled as every step.exec goes out and, nearly always, cancelled a few milliseconds later by
// its step.result. Here that is a Map entry added and removed, not a Node timer made and cleared per
// step: scheduled callbacks wait in slots `tickMs` wide, turned by one Node interval that runs only
// while something is scheduled (it stops at the first turn that finds nothing). A callback fires at
// most one tick (plus the event loop's delay) after its time, never before.
import type { ActorOptions, AnyActorLogic } from 'xstate';

/** XState's clock (createActor's `clock` option): setTimeout and clearTimeout. */
export type Clock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

type Handle = number;

export class TimerWheel implements Clock {
  // Slot number (a tick: slot n is turned once floor(now / tickMs) reaches n) → its callbacks, by handle.
  private readonly slots = new Map<number, Map<Handle, () => void>>();
  private readonly slotOf = new Map<Handle, number>();
  private nextHandle = 1;
  private interval: NodeJS.Timeout | undefined;
  // The last slot whose callbacks have all been called.
  private turnedTo = 0;

  constructor(
    private readonly tickMs = 10,
    /** A callback that throws: it must not stop the others, nor the wheel. */
    private readonly onError: (err: unknown) => void = () => {},
    private readonly now: () => number = () => performance.now(),
  ) {}

  setTimeout(fn: () => void, timeout: number): Handle {
    const handle = this.nextHandle++;
    // The slot after the tick the time falls in: past every slot already turned, and never early.
    const slot = Math.floor((this.now() + Math.max(0, timeout)) / this.tickMs) + 1;
    let due = this.slots.get(slot);
    if (!due) this.slots.set(slot, (due = new Map()));
    due.set(handle, fn);
    this.slotOf.set(handle, slot);
    if (!this.interval) {
      this.turnedTo = Math.floor(this.now() / this.tickMs);
      // Unref'd: the service's sockets keep the process up; a wheel must not keep a stopped one.
      this.interval = setInterval(() => this.turn(), this.tickMs).unref();
    }
    return handle;
  }

  clearTimeout(handle: Handle): void {
    const slot = this.slotOf.get(handle);
    if (slot === undefined) return;
    this.slotOf.delete(handle);
    const due = this.slots.get(slot)!;
    due.delete(handle);
    if (!due.size) this.slots.delete(slot);
    // The interval stops at its next turn when nothing waits, not here: a run alone on the wheel
    // clears its step's time-out and schedules the next one at once, every step.
  }

  /** How many callbacks wait. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Whether its Node interval runs. */
  get turning(): boolean {
    return this.interval !== undefined;
  }

  private turn(): void {
    const current = Math.floor(this.now() / this.tickMs);
    for (let slot = this.turnedTo + 1; slot <= current; slot++) {
      const due = this.slots.get(slot);
      if (!due) continue;
      // A callback may cancel others of the same slot (skipped: Map iteration does not visit them).
      for (const [handle, fn] of due) {
        due.delete(handle);
        this.slotOf.delete(handle);
        try {
          fn();
        } catch (err) {
          this.onError(err);
        }
      }
      this.slots.delete(slot);
    }
    this.turnedTo = current;
    if (!this.slotOf.size) this.stop();
  }

  private stop(): void {
    clearInterval(this.interval);
    this.interval = undefined;
  }
}
