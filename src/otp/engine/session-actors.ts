// Every session machine of the process runs in one XState actor system. A root actor (createActor)
// makes a system of its own: two Maps, a WeakMap, a Set, a scheduler and a dozen closures, about
// 2 KiB, which a fleet of idle sessions paid once each. Here each session's actor is created with a
// shared root as its `parent` and so joins the root's system; the root does nothing (a callback
// actor: what its children report when they stop, it ignores). Inspection is the system's: one
// observer on the root hands each microstep to the session whose actor made it. Its clock is a
// timer wheel (timer-wheel.ts): every session has a delay pending all its life (the keepalive, the
// hello's or the pong's time-out), and a Node Timeout for each is about 120 bytes and a timer list
// insert per keepalive round; the wheel's entry is a Map slot.
import { type Actor, type AnyActorRef, createActor, fromCallback, type InspectionEvent } from 'xstate';
import { sessionMachine } from '../../../machines/session.machine.js';
import type { SessionInput } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import { TimerWheel } from './timer-wheel.js';
import { LONGEST_TRANSFER_WAIT_MS } from './transfer-waits.js';
import { cancelAllByIds, delayedEventIds, shareOptions, stopChildActor } from './xstate-adapter.js';

export interface InspectedSession {
  inspected(event: InspectionEvent): void;
}

export type SessionActor = Actor<typeof sessionMachine>;

const owners = new WeakMap<object, InspectedSession>();
let root: AnyActorRef | undefined;

/** How late a session's delay may fire: keepalives are seconds, time-outs hundreds of ms. */
const SESSION_TICK_MS = 25;

/** What a delayed event's delivery throws is thrown again outside the wheel, as a Node timer's would be. */
function rethrow(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

function inspectedBySession(event: InspectionEvent): void {
  owners.get(event.actorRef)?.inspected(event);
}

function sharedRoot(): AnyActorRef {
  if (root) return root;
  const actor = createActor(
    fromCallback(() => {}),
    { inspect: inspectedBySession, clock: new TimerWheel(SESSION_TICK_MS, rethrow) },
  );
  actor.start();
  // XState's cancelAll (as an actor stops) walks every delayed event of the system: shared by
  // 10,000 sessions, a drain that stops them all would walk 10,000 × 10,000. A session machine
  // schedules only its `after` events, under ids known from its definition: cancel those.
  cancelAllByIds(actor.system, delayedEventIds(sessionMachine.root));
  root = actor;
  return actor;
}

const inputs = new WeakMap<Config['otp'], SessionInput>();
/** The resolved options of the first session actor of each input, which the others share (xstate-adapter.ts). */
const resolvedOptions = new WeakMap<SessionInput, object>();

/** The session machine's input: the same for every session of a configuration, so made once. */
function sessionInput(otp: Config['otp']): SessionInput {
  let input = inputs.get(otp);
  if (!input) {
    input = {
      keepaliveMs: otp.keepaliveSec * 1000,
      pongTimeoutMs: otp.pongTimeoutMs,
      helloTimeoutMs: otp.helloTimeoutMs,
      maxInvalidFrames: otp.maxInvalidFrames,
      resumeWindowMs: otp.resumeWindowMs,
      // The asker's own deadline (transfers.ts) comes first: its refusal, or the session.
      resumeAnswerMs: otp.helloTimeoutMs + LONGEST_TRANSFER_WAIT_MS,
    };
    inputs.set(otp, input);
  }
  return input;
}

/** A session machine's actor in the shared system, its inspection events to `owner` (not started). */
export function createSessionActor(owner: InspectedSession, otp: Config['otp']): SessionActor {
  const input = sessionInput(otp);
  const actor = createActor(sessionMachine, { input, parent: sharedRoot() });
  resolvedOptions.set(input, shareOptions(actor, resolvedOptions.get(input)));
  owners.set(actor, owner);
  return actor;
}

/** Stops a session's actor (it has a parent: xstate-adapter.ts). */
export function stopSessionActor(actor: SessionActor): void {
  stopChildActor(actor);
}
