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

export class SessionTrace {
  readonly transitions: SessionTransition[] = [];
  dropped = 0;
  pings = 0;
  pongs = 0;
  lastPingAt: Date | null = null;
  lastPongAt: Date | null = null;
  /** The state entered last (a dotted path). */
  state = 'awaitingHello';

  constructor(private readonly session: SessionChange['session']) {
    this.transitions.push({ at: new Date().toISOString(), event: 'xstate.init', from: null, to: this.state });
  }

  /** XState's inspection: each microstep's transitions. */
  microstep(event: Microstep): void {
    let kind: SessionChange['kind'] | undefined;
    for (const t of event._transitions as AnyTransitionDefinition[]) {
      if (!t.target?.length) continue;
      const from = t.source.path.length ? t.source.path.join('.') : '*';
      const to = t.target[0]!.path.join('.');
      const now = new Date();
      if (from === 'ready.alive' && to === 'ready.awaitingPong') {
        this.pings++;
        this.lastPingAt = now;
        kind ??= 'keepalive';
      } else if (from === 'ready.awaitingPong' && to === 'ready.alive') {
        this.pongs++;
        this.lastPongAt = now;
        kind ??= 'keepalive';
      } else {
        this.transitions.push({ at: now.toISOString(), event: eventLabel(t), from, to });
        if (this.transitions.length > SESSION_TRACE_LIMIT) {
          this.transitions.shift();
          this.dropped++;
        }
        kind = 'lifecycle';
      }
      this.state = to;
    }
    if (kind && sessionChanges.hasSubscribers) {
      const change: SessionChange = { session: this.session, trace: this, kind };
      sessionChanges.publish(change);
    }
  }

  get closed(): boolean {
    return this.state === 'closed';
  }
}
