// What an executor session is given: its connection (from the socket adapter), the engine's hooks
// it calls, and its collaborators.
import type { SessionOutput } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { RunStore } from '../store/run-store.js';

/** What the socket adapter gives a session. */
export interface Connection {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** `S`: the session (ExecutorSession; generic so that this file needs not import it). */
export interface SessionHooks<S> {
  /** The welcome went out (or the session was resumed): the session may take runs. */
  ready(session: S): void;
  /** The socket dropped (or was replaced): the session takes no run until it is resumed. */
  detached(session: S): void;
  /** A hello with resumeSessionId on this new connection: find that session and hand this connection to it. */
  resume(greeter: S, sessionId: string, ref: string): void;
  /** The session machine stopped; its runs must be finished. */
  closed(session: S, output: SessionOutput): void;
  /** A recording frame (docs/recording.md), handed on in arrival order; ref is the frame's id. */
  recording(session: S, type: 'record.start' | 'record.stop' | 'event.recorded', payload: unknown, ref: string): void;
}

export interface SessionDeps<S> {
  otp: Config['otp'];
  /** The service's HTTP base address for welcome.apiUrl (undefined until the REST listener is bound). */
  apiUrl(): string | undefined;
  store: RunStore;
  instanceId: string;
  log: Logger;
  hooks: SessionHooks<S>;
  /** Reports a failed write; true when it was an outage of the database (the hello may be retried). */
  unavailable?: (err: unknown) => boolean;
}
