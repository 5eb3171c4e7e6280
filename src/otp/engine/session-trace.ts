// What the console shows of a session's machine, kept in memory by the session itself (nothing is
// written: a session lives for hours and pings every keepaliveSec): its transitions, the newest
// SESSION_TRACE_LIMIT of them, except the keepalive round trips (ready.alive → ready.awaitingPong on
// `after keepalive`, back on PONG), which are only counted, with the time of the last of each. Every
// change is published on the `otp:session.change` channel, which RunWatch reads for the sessions of
// its own engine; its close reason is the one thing stored (otp_sessions.close_code/close_reason).
import diagnostics from 'node:diagnostics_channel';
import type { AnyTransitionDefinition, InspectionEvent } from 'xstate';
import { eventLabel } from './xstate-adapter.js';

export const SESSION_TRACE_LIMIT = 200;

export interface SessionTransition {
  at: string;
  event: string;
  /** Dotted state path; `*` for a transition of the machine itself; null at the start. */
  from: string | null;
  to: string;
}

export interface SessionChange {
  session: { readonly id: string; readonly principal: { projectId: string } };
  trace: SessionTrace;
  /** `keepalive`: only a ping or pong was counted; `lifecycle`: a transition was kept. */
  kind: 'lifecycle' | 'keepalive';
}

export const sessionChanges = diagnostics.channel('otp:session.change');

type Microstep = Extract<InspectionEvent, { type: '@xstate.microstep' }>;

/** A kept transition's names: one object per transition of the machine, shared by every session. */
interface TransitionLabel {
  event: string;
  from: string;
  to: string;
}

const INIT: TransitionLabel = { event: 'xstate.init', from: '', to: 'awaitingHello' };
const labels = new WeakMap<AnyTransitionDefinition, TransitionLabel>();

function labelOf(t: AnyTransitionDefinition): TransitionLabel {
  let label = labels.get(t);
  if (!label) {
    const from = t.source.path.length ? t.source.path.join('.') : '*';
    label = { event: eventLabel(t), from, to: t.target![0]!.path.join('.') };
    labels.set(t, label);
  }
  return label;
}

/**
 * Held by every session for as long as it lives, so kept small: the transitions as pairs of a time
 * and a shared label in one array, the keepalive's times as numbers; the objects the console reads
 * (SessionTransition, Date) are made when it reads them. A time is ms since the trace began, a small
 * integer V8 keeps unboxed (ms since the epoch would each be a 16-byte heap number); the array is
 * made anew, exactly as long as it needs, at each kept transition (push would leave room for a dozen
 * more in every idle session; a session keeps a transition a handful of times in its life).
 */
export class SessionTrace {
  /** [ms since `bornMs`, label, ...], oldest first. */
  private kept: Array<number | TransitionLabel>;
  private readonly bornMs = Date.now();
  dropped = 0;
  pings = 0;
  pongs = 0;
  private lastPingMs = 0;
  private lastPongMs = 0;
  private last: TransitionLabel = INIT;

  constructor(private readonly session: SessionChange['session']) {
    this.kept = [0, INIT];
  }

  /** The transitions kept, oldest first. */
  get transitions(): SessionTransition[] {
    const out: SessionTransition[] = [];
    for (let i = 0; i < this.kept.length; i += 2) {
      const label = this.kept[i + 1] as TransitionLabel;
      const at = new Date(this.bornMs + (this.kept[i] as number)).toISOString();
      out.push({ at, event: label.event, from: label === INIT ? null : label.from, to: label.to });
    }
    return out;
  }

  /** The state entered last (a dotted path). */
  get state(): string {
    return this.last.to;
  }

  get lastPingAt(): Date | null {
    return this.lastPingMs ? new Date(this.lastPingMs) : null;
  }

  get lastPongAt(): Date | null {
    return this.lastPongMs ? new Date(this.lastPongMs) : null;
  }

  /** XState's inspection: each microstep's transitions. */
  microstep(event: Microstep): void {
    let kind: SessionChange['kind'] | undefined;
    for (const t of event._transitions as AnyTransitionDefinition[]) {
      if (!t.target?.length) continue;
      const label = labelOf(t);
      const now = Date.now();
      if (label.from === 'ready.alive' && label.to === 'ready.awaitingPong') {
        this.pings++;
        this.lastPingMs = now;
        kind ??= 'keepalive';
      } else if (label.from === 'ready.awaitingPong' && label.to === 'ready.alive') {
        this.pongs++;
        this.lastPongMs = now;
        kind ??= 'keepalive';
      } else {
        const full = this.kept.length >= 2 * SESSION_TRACE_LIMIT;
        this.kept = (full ? this.kept.slice(2) : this.kept).concat(now - this.bornMs, label);
        if (full) this.dropped++;
        kind = 'lifecycle';
      }
      this.last = label;
    }
    if (kind && sessionChanges.hasSubscribers) {
      const change: SessionChange = { session: this.session, trace: this, kind };
      sessionChanges.publish(change);
    }
  }

  get closed(): boolean {
    return this.last.to === 'closed';
  }
}
