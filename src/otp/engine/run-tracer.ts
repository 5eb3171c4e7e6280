// The run machine's transitions as they happen, kept by each run driver (trace-buffer.ts keeps them,
// the engine's flush and the verdict's write store them): the start, then every transition of every
// microstep, eventless and delayed ones included, each with the run's cursor after it and the frames
// the machine says it sent (machines/run.sends.ts).
import type { Actor, AnyTransitionDefinition, InspectionEvent } from 'xstate';
import { runMachine } from '../../../machines/run.machine.js';
import { framesSentAtStart } from '../../../machines/run.sends.js';
import type { RunEvent } from '../../../machines/types.js';
import type { TraceEntry } from '../store/run-trace.js';
import { labelOf, TraceBuffer, type TracedTransition, type TraceLabel } from './trace-buffer.js';
import { fastInspection, transitionsOf } from './xstate-adapter.js';

type RunActor = Actor<typeof runMachine>;
type Microstep = Extract<InspectionEvent, { type: '@xstate.microstep' }>;

const startSends = framesSentAtStart();

export class RunTracer extends TraceBuffer {
  private readonly start: TracedTransition;

  /** `changed`: told after every microstep; `now`: the clock of the times written (Date.now). */
  constructor(
    runId: string,
    private readonly changed: () => void,
    private readonly now: () => number = Date.now,
  ) {
    super(runId);
    // The initial state's eventless transitions are taken as the actor is created: the start goes first.
    const label = { event: 'xstate.init', from: null, to: String(runMachine.config.initial), sends: startSends };
    this.start = { ms: now(), label, cursor: 0 };
    this.push(this.start);
  }

  /** XState's `inspect` option: the microsteps taken as the actor is created go through it. */
  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === '@xstate.microstep') this.microstep(event);
  };

  /**
   * Once the actor exists: the start's cursor is where the start settled (the steps before it were
   * decided at the start), and the microsteps from now on come through `fastInspection`.
   */
  follow(actor: RunActor): void {
    this.start.cursor = actor.getSnapshot().context.cursor;
    fastInspection(actor, (event) => this.microstep(event));
  }

  /**
   * The transition `event` would take now, as a trace entry with `cursor`: what the verdict's write
   * stores as its last (the transition its own answer leads to), with the frames the machine would
   * send on it, as the machine decides them.
   */
  next(actor: RunActor, event: RunEvent, cursor: number): TraceEntry | undefined {
    const taken = actor.logic
      .getTransitionData(actor.getSnapshot(), event)
      .find((t: AnyTransitionDefinition) => t.target?.length);
    if (!taken) return undefined;
    const { event: name, from, to, sends } = labelOf(taken);
    const at = new Date(this.now()).toISOString();
    return sends ? { at, event: name, from, to, cursor, sends } : { at, event: name, from, to, cursor };
  }

  private microstep(event: Microstep): void {
    const ms = this.now();
    const { cursor } = (event.snapshot as ReturnType<RunActor['getSnapshot']>).context;
    for (const t of transitionsOf(event)) {
      if (!t.target?.length) continue; // an action without a change of state
      this.push({ ms, label: labelOf(t) as TraceLabel, cursor });
    }
    this.changed();
  }
}
