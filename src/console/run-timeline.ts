// One time line for a run: its machine's transitions, and beside them the OTP frames it exchanged and
// the durable writes answered, all read from the trace the driver already keeps (nothing is stored
// per frame: that would cost the step path). Each trace entry says which frames its transition sent
// (`sends`: the machine's own definition says it, machines/run.sends.ts); what arrived is the event
// that took the transition:
//   step.result    every STEP_RESULT transition (a refused one changes no state and is not traced)
//   durable write  STEPS_RECORDED / RUN_FINISH_WRITTEN (and their failures), for the steps decided
//                  since the last write
// Each entry's `cursor` (the step sent on entering `running`, else the next to send) says which step;
// traces written before it was recorded get their frames without step numbers, and those written
// before `sends` was recorded show no frame sent.
import type { RunTrace, TraceEntry } from '../otp/store/run-trace.js';

export type RowKind = 'transition' | 'out' | 'in' | 'write' | 'service';

export interface TimelineRow {
  /** The transition the row belongs to, counted from the run's start (dropped ones included). */
  t: number;
  kind: RowKind;
  at: string;
  /** For a transition: the entry; for the others, what happened. */
  entry?: TraceEntry;
  frame?: string;
  text: string;
  /** The steps concerned (a frame's step, the steps a write made durable). */
  steps?: [number, number];
}

/** When each frame of one step left or arrived: transition numbers (`t`) and times. */
export interface StepFrames {
  exec?: { t: number; at: string };
  /** The step.result, or the service's own decision (a skip, a time-out, a cancel). */
  decided?: { t: number; at: string; by: 'executor' | 'service' };
  written?: { t: number; at: string };
  /** The next step.exec of the run: the service's part between this result and the next step. */
  next?: { t: number; at: string };
  /** step.exec sent again after a resume. */
  resent: number;
}

export interface RunTimeline {
  rows: TimelineRow[];
  steps: Map<number, StepFrames>;
}

const range = (a: number, b: number) => (a === b - 1 ? `step ${a + 1}` : `steps ${a + 1}–${b}`);

/** What an event that answers a write says, before its transition. */
const WRITE_ANSWERS: Record<string, string> = {
  STEPS_NOT_RECORDED: 'write failed: the verdict takes these steps',
  RUN_FINISH_FAILED: 'the verdict could not be written',
  DB_UNAVAILABLE: 'the database is unavailable: the write waits for it',
};

/** `run.totalSteps`: how many steps the run has. */
export function runTimeline(
  trace: Pick<RunTrace, 'transitions' | 'dropped'>,
  run: { totalSteps: number },
): RunTimeline {
  const line = new TimelineBuilder(run.totalSteps);
  for (const [i, entry] of trace.transitions.entries()) line.add(trace.dropped + i, entry);
  return { rows: line.rows, steps: line.steps };
}

/** The time line, one trace entry after the other. */
class TimelineBuilder {
  readonly rows: TimelineRow[] = [];
  readonly steps = new Map<number, StepFrames>();
  private inFlight: number | undefined;
  private lastResult: StepFrames | undefined;
  private writtenUpTo: number | undefined;
  // The cursor after the entry before (undefined until one said).
  private prev: number | undefined;

  constructor(private readonly totalSteps: number) {}

  add(t: number, entry: TraceEntry): void {
    const { at } = entry;
    const before = [...this.arrived(t, entry), ...this.written(t, entry)];
    const after = [...this.rewound(t, entry), ...this.decided(t, entry), ...this.sent(t, entry)];
    this.rows.push(...before, { t, kind: 'transition', at, entry, text: entry.event }, ...after);
    if (entry.cursor !== undefined) this.prev = entry.cursor;
  }

  private frames(i: number): StepFrames {
    let s = this.steps.get(i);
    if (!s) this.steps.set(i, (s = { resent: 0 }));
    return s;
  }

  /** The step.result that took the transition. */
  private arrived(t: number, { event, at }: TraceEntry): TimelineRow[] {
    if (event !== 'STEP_RESULT') return [];
    const step = this.inFlight;
    const text = step === undefined ? 'step.result' : `step.result of step ${step + 1}`;
    return [
      { t, kind: 'in', at, frame: 'step.result', text, ...(step === undefined ? {} : { steps: [step, step + 1] }) },
    ];
  }

  /** A write answered: the steps it made durable, or why it is not. */
  private written(t: number, { event, at }: TraceEntry): TimelineRow[] {
    const answer = WRITE_ANSWERS[event];
    if (answer) return [{ t, kind: 'write', at, text: answer }];
    if (event !== 'STEPS_RECORDED' && event !== 'RUN_FINISH_WRITTEN') return [];
    const upTo = event === 'RUN_FINISH_WRITTEN' ? this.totalSteps : this.prev;
    const start = this.writtenUpTo ?? (upTo === undefined ? undefined : firstUnwritten(this.steps, upTo));
    const some = start !== undefined && upTo !== undefined && upTo > start;
    const what = some ? range(start, upTo) : 'no step';
    const text = event === 'RUN_FINISH_WRITTEN' ? `durable: the verdict and ${what}` : `durable: ${what}`;
    if (start !== undefined && upTo !== undefined) {
      for (let s = start; s < upTo; s++) this.frames(s).written = { t, at };
      this.writtenUpTo = upTo;
    }
    return [{ t, kind: 'write', at, text, ...(some ? { steps: [start, upTo] as [number, number] } : {}) }];
  }

  /**
   * The cursor went back: a test case failed and runs again (retries). Its steps' frames start over;
   * the rows show the last attempt (the run page lists what the earlier ones did).
   */
  private rewound(t: number, { cursor: c, at }: TraceEntry): TimelineRow[] {
    if (c === undefined || this.prev === undefined || c >= this.prev) return [];
    for (const s of [...this.steps.keys()]) if (s >= c) this.steps.delete(s);
    this.writtenUpTo = c;
    this.inFlight = undefined;
    this.lastResult = undefined;
    const text = `the test case failed: it runs again from step ${c + 1}`;
    return [{ t, kind: 'service', at, text, steps: [c, c + 1] }];
  }

  /** The steps the cursor moved past: the one in flight by its result, the others by the service. */
  private decided(t: number, { event, cursor: c, at }: TraceEntry): TimelineRow[] {
    const from = event === 'xstate.init' ? 0 : this.prev;
    if (c === undefined || from === undefined || c <= from) return [];
    let serviceFrom = from;
    if (event === 'STEP_RESULT' && this.inFlight === from) {
      this.frames(from).decided = { t, at, by: 'executor' };
      this.lastResult = this.frames(from);
      serviceFrom = from + 1;
    }
    for (let s = serviceFrom; s < c; s++) this.frames(s).decided = { t, at, by: 'service' };
    if (c <= serviceFrom) return [];
    const why = event === 'after stepTimeout' && this.inFlight === serviceFrom ? 'timed out; ' : '';
    const text = `decided by the service: ${why}${range(serviceFrom, c)}`;
    return [{ t, kind: 'service', at, text, steps: [serviceFrom, c] }];
  }

  /** The frames the transition sent, as its entry says. */
  private sent(t: number, entry: TraceEntry): TimelineRow[] {
    return (entry.sends ?? []).map((frame) => {
      if (frame === 'step.exec') return this.stepExec(t, entry);
      const text =
        frame === 'run.start' ? `run.start: ${this.totalSteps} step${this.totalSteps === 1 ? '' : 's'}` : frame;
      return { t, kind: 'out', at: entry.at, frame, text };
    });
  }

  /** A step.exec: of the step at the cursor (again, the same frame, when the run comes back from `paused`). */
  private stepExec(t: number, { cursor: c, from, at }: TraceEntry): TimelineRow {
    const again = from === 'paused';
    const text = `step.exec${c === undefined ? '' : ` of step ${c + 1}`}${again ? ', again (the session was resumed)' : ''}`;
    if (c === undefined) return { t, kind: 'out', at, frame: 'step.exec', text };
    const s = this.frames(c);
    if (s.exec) s.resent++;
    else s.exec = { t, at };
    if (this.lastResult && !this.lastResult.next && !again) this.lastResult.next = { t, at };
    this.inFlight = c;
    return { t, kind: 'out', at, frame: 'step.exec', text, steps: [c, c + 1] };
  }
}

/** The first step from which no write was seen (the trace's window may start after some). */
function firstUnwritten(steps: Map<number, StepFrames>, upTo: number): number {
  let first = upTo;
  for (const [i, s] of steps) if (!s.written && s.decided && i < first) first = i;
  return first;
}

/** Milliseconds from `a` to `b` (ISO times), or undefined. */
export function between(a: { at: string } | undefined, b: { at: string } | undefined): number | undefined {
  if (!a || !b) return undefined;
  return Date.parse(b.at) - Date.parse(a.at);
}
