// The run machine's transitions as a run driver keeps them in memory: the newest last, trimmed to
// TRACE_LIMIT once past it by a margin; the engine's flush appends what is new since the version it
// wrote last, and the verdict's write carries the whole window.
import type { AnyTransitionDefinition } from 'xstate';
import { framesSentBy } from '../../../machines/run.sends.js';
import { isoAt } from '../protocol/frames.js';
import { TRACE_LIMIT, type TraceEntry, type TraceWrite } from '../store/run-trace.js';
import { eventLabel } from './xstate-adapter.js';

export type TraceLabel = Pick<TraceEntry, 'event' | 'from' | 'to' | 'sends'>;
// A transition in memory: its time as a number, its ISO form made once, when first read; the run's
// cursor after it (the console derives the frames of each step from it: console/run-timeline.ts).
export type TracedTransition = { ms: number; iso?: string; label: TraceLabel; cursor: number };

// The machine's transition definitions are built once, with the machine: each one's label is too,
// with the frames the machine says the transition sends (machines/run.sends.ts).
const labels = new WeakMap<AnyTransitionDefinition, TraceLabel>();
export function labelOf(t: AnyTransitionDefinition): TraceLabel {
  let label = labels.get(t);
  if (!label) {
    const sends = framesSentBy(t);
    const [event, from, to] = [eventLabel(t), t.source.path.join('.'), t.target![0]!.path.join('.')];
    label = sends.length ? { event, from, to, sends } : { event, from, to };
    labels.set(t, label);
  }
  return label;
}

// Every property written out: a literal after a spread is built the slow way, 200 times a run.
function traceEntry(t: TracedTransition): TraceEntry {
  const { event, from, to, sends } = t.label;
  const at = (t.iso ??= isoAt(t.ms));
  return sends ? { at, event, from, to, cursor: t.cursor, sends } : { at, event, from, to, cursor: t.cursor };
}

export class TraceBuffer {
  private readonly trace: TracedTransition[] = [];
  private dropped = 0;
  /** Bumped by every transition. */
  version = 0;
  /** The version the engine's flush wrote last. */
  flushedVersion = 0;

  constructor(private readonly runId: string) {}

  push(entry: TracedTransition): void {
    this.trace.push(entry);
    this.version++;
    if (this.trace.length > TRACE_LIMIT + 50) {
      const extra = this.trace.length - TRACE_LIMIT;
      this.trace.splice(0, extra);
      this.dropped += extra;
    }
  }

  /** The last TRACE_LIMIT transitions, oldest first, and how many older ones were dropped. */
  snapshot(): TraceWrite {
    const extra = Math.max(0, this.trace.length - TRACE_LIMIT);
    return { runId: this.runId, transitions: this.trace.slice(extra).map(traceEntry), dropped: this.dropped + extra };
  }

  /**
   * What a flush writes when `version` was written last: the transitions since, to append; the whole
   * trace when none was written yet or some of those were already dropped.
   */
  since(version: number): TraceWrite {
    const fresh = this.version - version;
    if (version === 0 || fresh > this.trace.length) return this.snapshot();
    const dropped = Math.max(0, this.version - TRACE_LIMIT);
    return {
      runId: this.runId,
      transitions: this.trace.slice(this.trace.length - fresh).map(traceEntry),
      dropped,
      append: true,
    };
  }
}
