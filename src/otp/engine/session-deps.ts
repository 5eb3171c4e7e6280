// What an executor session is given: its connection (from the socket adapter), where it publishes
// what happens to it (SessionEvents, one emitter for every session of the process: sessions.ts), and
// its collaborators.
import type { SessionOutput } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { RunStore } from '../store/run-store.js';

/** What the socket adapter gives a session. */
export interface Connection {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export type RecordingFrameType = 'record.start' | 'record.stop' | 'event.recorded';

/**
 * What sessions publish (`S`: the session, ExecutorSession; generic so that this file needs not
 * import it). The parts of the engine that care subscribe where the engine builds them.
 */
export interface SessionEvents<S> {
  /** The welcome went out (`fresh`: its first, a new session no run is pinned to yet) or the session was resumed: it may take runs. */
  ready: [session: S, fresh: boolean];
  /** The socket dropped (or is being replaced, or the session is moving): it takes no run until it is ready again. */
  detached: [session: S];
  /** A hello with resumeSessionId on this new connection: find that session and hand this connection to it. */
  resumeAsked: [greeter: S, sessionId: string, ref: string];
  /** The session machine stopped: `output` says why (`transferred`: it now lives in another process). */
  closed: [session: S, output: SessionOutput];
  /** A recording frame (docs/recording.md), in arrival order; ref is the frame's id. */
  recordingFrame: [session: S, type: RecordingFrameType, payload: unknown, ref: string];
}

export interface SessionDeps<S> {
  otp: Config['otp'];
  /** The service's HTTP base address for welcome.apiUrl (undefined until the REST listener is bound). */
  apiUrl(): string | undefined;
  store: RunStore;
  instanceId: string;
  log: Logger;
  /** Where the session publishes what happens to it (the registry's emitter). */
  events: { emit<K extends keyof SessionEvents<S>>(event: K, ...args: SessionEvents<S>[K]): boolean };
  /** Reports a failed write; true when it was an outage of the database (the hello may be retried). */
  unavailable?: (err: unknown) => boolean;
}
