// The one place the service relies on XState beyond its documented API, so that an XState release
// that changes any of it fails one test (test/otp/xstate-adapter.spec.ts) and nothing else; the
// package is pinned to the versions that test has passed (XSTATE_VERIFIED, package.json).
//  - the transitions of a microstep (`_transitions` of an `@xstate.microstep` inspection event);
//  - the inspection sender of an actor system (`_sendInspectionEvent`), replaced for speed;
//  - the names XState gives delayed events (`xstate.after.<delay>.<state id>`);
//  - stopping an actor that has a parent (`_stop`), and the scheduler's `cancelAll` replaced for a
//    system shared by many actors of one machine (session-actors.ts);
//  - an actor's resolved `options`, read again only by `start` and `attachDevTools`, shared by the
//    actors created with the same ones (session-actors.ts).
import type { AnyActorRef, AnyStateNode, AnyTransitionDefinition, InspectionEvent } from 'xstate';

/** The XState versions whose internals this file was checked against (the adapter's test asserts it). */
export const XSTATE_VERIFIED = ['5.33.3'];

type Microstep = Extract<InspectionEvent, { type: '@xstate.microstep' }>;

/**
 * XState hands every inspection event of the run (each event, action, snapshot and microstep) to
 * the `inspect` observers through its system's `_sendInspectionEvent`, copying each into a new
 * object first; the trace needs the microsteps only. Once the actor exists (its first microsteps,
 * taken as it is created, went through `inspect`), that sender is replaced by one that hands the
 * microsteps straight to the trace and drops the rest, which only the trace would have seen (the
 * figure is in docs/decisions.md, "Measured reasons in the hot paths"). When a version lacks it, inspection goes on as before
 * through `inspect`, and the adapter's test fails.
 */
export function fastInspection(actor: { system: unknown }, microstep: (event: Microstep) => void): boolean {
  const system = actor.system as { _sendInspectionEvent?: (event: InspectionEvent) => void };
  if (typeof system._sendInspectionEvent !== 'function') return false;
  system._sendInspectionEvent = (event) => {
    if (event.type === '@xstate.microstep') microstep(event);
  };
  return true;
}

/** `always` for an eventless transition, `after <delay>` for a delayed one (xstate.after.<delay>.<state id>). */
export function eventLabel(t: Pick<AnyTransitionDefinition, 'eventType' | 'source'>): string {
  if (t.eventType === '') return 'always';
  const prefix = 'xstate.after.';
  if (t.eventType.startsWith(prefix) && t.eventType.endsWith(`.${t.source.id}`))
    return `after ${t.eventType.slice(prefix.length, -(t.source.id.length + 1))}`;
  return t.eventType;
}

/** The transitions a microstep took (eventless and delayed ones included). */
export function transitionsOf(event: Microstep): readonly AnyTransitionDefinition[] {
  return event._transitions;
}

/**
 * Stops an actor that has a parent: `stop()` refuses one ("a non-root actor cannot be stopped
 * directly"); `_stop` is what XState's own stopChild calls, and stops it as a root would.
 */
export function stopChildActor(actor: AnyActorRef): void {
  (actor as unknown as { _stop(): unknown })._stop();
}

/** The ids under which a machine's `after` transitions are scheduled (`xstate.after.<delay>.<state id>`). */
export function delayedEventIds(node: AnyStateNode): string[] {
  const own = node.after.map((t) => t.eventType);
  return [...own, ...Object.values(node.states).flatMap((child) => delayedEventIds(child))];
}

/**
 * XState's `cancelAll` (as an actor stops) walks every delayed event of the actor's system. In a
 * system shared by thousands of actors of one machine that scheduling only its `after` events, the
 * actor's own are known by id: cancel those instead (an id not scheduled is a no-op in `cancel`).
 */
export function cancelAllByIds(system: AnyActorRef['system'], ids: readonly string[]): void {
  const { scheduler } = system;
  scheduler.cancelAll = (source) => {
    for (const id of ids) scheduler.cancel(source, id);
  };
}

type WithOptions = { options: object };

/**
 * An actor keeps its resolved options, `{ ...XState's defaults, ...the caller's }`. Where that spread
 * runs at a site V8 has seen many option shapes at (every createActor of the process, XState's own
 * included), each result gets a hidden class of its own: about 300 bytes per actor for the same four
 * values (measured in benchmarks/RESULTS.md, "Issue 36, last part"). When `actor`'s options equal
 * `shared`'s, key for key, the actor takes `shared`'s. Answers the options the next actor may share.
 */
export function shareOptions(actor: WithOptions, shared: object | undefined): object {
  const own = actor.options as Record<string, unknown>;
  if (!shared) return own;
  const other = shared as Record<string, unknown>;
  const keys = Object.keys(own);
  if (keys.length !== Object.keys(other).length || keys.some((k) => own[k] !== other[k])) return own;
  (actor as { options: object }).options = shared;
  return shared;
}
