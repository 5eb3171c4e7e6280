// One time line for a run: its machine's transitions, and beside them the OTP frames it exchanged and
// the durable writes answered, all derived from the trace the driver already keeps (nothing is stored
// per frame: that would cost the step path). The run machine emits each frame from a known
// transition, so the trace says when it left or arrived:
//   run.start      the start (xstate.init; the run machine's root entry sends it)
//   step.exec      every transition into `running` (its entry sends the step at the cursor; again,
//                  with the same id, when it comes from `paused`)
//   step.result    every STEP_RESULT transition (a refused one changes no state and is not traced)
//   durable write  STEPS_RECORDED / RUN_FINISH_WRITTEN (and their failures), for the steps decided
//                  since the last write
//   run.cancel     CANCEL into `finishing`, or the write answered after a cancel (a cancelled run)
//   run.finished   the verdict written, unless the executor was lost
// Each entry's `cursor` (the step sent on entering `running`, else the next to send) says which step;
// traces written before it was recorded get their frames without step numbers.
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

/**
 * `run`: how many steps it has and why it ended. A run whose executor was lost ends `error` with the
 * loss as its reason (machines/run.steps.ts, decideOutput) and is sent no run.finished; a loss
 * during a write changes no state, so the trace alone cannot tell.
 */
export function runTimeline(
  trace: Pick<RunTrace, 'transitions' | 'dropped' | 'status'>,
  run: { totalSteps: number; reason?: string | null },
): RunTimeline {
  const { totalSteps } = run;
  const rows: TimelineRow[] = [];
  const steps = new Map<number, StepFrames>();
  const frames = (i: number) => {
    let s = steps.get(i);
    if (!s) steps.set(i, (s = { resent: 0 }));
    return s;
  };
  const lost =
    trace.transitions.some((e) => e.event === 'EXECUTOR_LOST') ||
    (trace.status === 'error' && /executor/i.test(run.reason ?? ''));
  let inFlight: number | undefined;
  let lastResult: StepFrames | undefined;
  let writtenUpTo: number | undefined;
  let prev: number | undefined;
  let told = false;

  trace.transitions.forEach((e, i) => {
    const t = trace.dropped + i;
    const { at } = e;
    const c = e.cursor;
    const known = c !== undefined;
    // Steps decided by this transition: those the cursor moved past.
    const from = e.event === 'xstate.init' ? 0 : prev;
    const before: TimelineRow[] = [];
    const after: TimelineRow[] = [];

    if (e.event === 'xstate.init')
      after.push({
        t,
        kind: 'out',
        at,
        frame: 'run.start',
        text: `run.start: ${totalSteps} step${totalSteps === 1 ? '' : 's'}`,
      });
    if (e.event === 'STEP_RESULT') {
      before.push({
        t,
        kind: 'in',
        at,
        frame: 'step.result',
        text: inFlight === undefined ? 'step.result' : `step.result of step ${inFlight + 1}`,
        ...(inFlight === undefined ? {} : { steps: [inFlight, inFlight + 1] as [number, number] }),
      });
    }
    if (e.event === 'STEPS_RECORDED' || e.event === 'RUN_FINISH_WRITTEN') {
      const upTo = e.event === 'RUN_FINISH_WRITTEN' ? totalSteps : prev;
      const start = writtenUpTo ?? (upTo === undefined ? undefined : firstUnwritten(steps, upTo));
      const what = start !== undefined && upTo !== undefined && upTo > start ? range(start, upTo) : 'no step';
      before.push({
        t,
        kind: 'write',
        at,
        text: e.event === 'RUN_FINISH_WRITTEN' ? `durable: the verdict and ${what}` : `durable: ${what}`,
        ...(start !== undefined && upTo !== undefined && upTo > start
          ? { steps: [start, upTo] as [number, number] }
          : {}),
      });
      if (start !== undefined && upTo !== undefined) {
        for (let s = start; s < upTo; s++) frames(s).written = { t, at };
        writtenUpTo = upTo;
      }
    }
    if (e.event === 'STEPS_NOT_RECORDED')
      before.push({ t, kind: 'write', at, text: 'write failed: the verdict takes these steps' });
    if (e.event === 'RUN_FINISH_FAILED')
      before.push({ t, kind: 'write', at, text: 'the verdict could not be written' });

    // The cursor went back: a test case failed and runs again (retries). Its steps' frames start over;
    // the rows show the last attempt (the run page lists what the earlier ones did).
    if (known && prev !== undefined && c < prev) {
      for (const s of [...steps.keys()]) if (s >= c) steps.delete(s);
      writtenUpTo = c;
      inFlight = undefined;
      lastResult = undefined;
      after.push({
        t,
        kind: 'service',
        at,
        text: `the test case failed: it runs again from step ${c + 1}`,
        steps: [c, c + 1],
      });
    }

    if (known && from !== undefined && c > from) {
      let serviceFrom = from;
      if (e.event === 'STEP_RESULT' && inFlight === from) {
        frames(from).decided = { t, at, by: 'executor' };
        lastResult = frames(from);
        serviceFrom = from + 1;
      }
      for (let s = serviceFrom; s < c; s++) frames(s).decided = { t, at, by: 'service' };
      if (c > serviceFrom) {
        const why = e.event === 'after stepTimeout' && inFlight === serviceFrom ? 'timed out; ' : '';
        after.push({
          t,
          kind: 'service',
          at,
          text: `decided by the service: ${why}${range(serviceFrom, c)}`,
          steps: [serviceFrom, c],
        });
      }
    }

    if (e.to === 'running') {
      const again = e.from === 'paused';
      after.push({
        t,
        kind: 'out',
        at,
        frame: 'step.exec',
        text: `step.exec${known ? ` of step ${c + 1}` : ''}${again ? ', again (the session was resumed)' : ''}`,
        ...(known ? { steps: [c, c + 1] as [number, number] } : {}),
      });
      if (known) {
        const s = frames(c);
        if (s.exec) s.resent++;
        else s.exec = { t, at };
        if (lastResult && !lastResult.next && !again) lastResult.next = { t, at };
        inFlight = c;
      }
    }
    if (
      e.to === 'finishing' &&
      (e.event === 'CANCEL' || (e.event === 'STEPS_RECORDED' && trace.status === 'cancelled' && !lost))
    ) {
      after.push({ t, kind: 'out', at, frame: 'run.cancel', text: 'run.cancel' });
    }
    if (e.event === 'DB_UNAVAILABLE')
      before.push({ t, kind: 'write', at, text: 'the database is unavailable: the write waits for it' });
    // Past the outage window the executor hears at once (abandoned); the verdict is written later.
    if (e.to === 'abandoned') told = true;
    if ((e.to === 'abandoned' || (e.to === 'done' && !told)) && !lost)
      after.push({ t, kind: 'out', at, frame: 'run.finished', text: 'run.finished' });

    rows.push(...before, { t, kind: 'transition', at, entry: e, text: e.event }, ...after);
    prev = known ? c : prev;
  });
  return { rows, steps };
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
