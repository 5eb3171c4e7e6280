// The executor sessions of this process: the session of each new socket (`connect`), found by id,
// and what happens to them published as typed events (SessionEvents, session-deps.ts) for the parts
// that care (Dispatch, the run drivers, recordings, transfers, Shutdown, RunWatch): each subscribes
// where the engine builds it. The connection switch is answered here: a hello that resumes a session
// this process holds moves its connection to that session. One this process does not hold is asked
// of the other processes (`resumeElsewhere`, transfers.ts).
import { EventEmitter } from 'node:events';
import { CloseCode, type SessionOutput } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { Notices } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import type { RunStore } from '../store/run-store.js';
import type { EngineEvents } from './diagnostics.js';
import type { Phase } from './phase.js';
import { type Connection, ExecutorSession, type SessionDeps, type TransferredSession } from './session.js';
import type { SessionEvents } from './session-deps.js';

export interface SessionRegistryDeps {
  config: Config;
  /** The service's HTTP base address told to executors in welcome.apiUrl. */
  apiUrl?(): string | undefined;
  store: RunStore;
  instanceId: string;
  log: Logger;
  phase: Phase;
  notices?: Notices;
  /** Metrics of this process. */
  events?: EngineEvents;
  health?: DatabaseHealth;
}

export type RegistryEvents = SessionEvents<ExecutorSession> & {
  /** hello.resumeSessionId names a session this process does not hold: another one may. */
  resumeElsewhere: [greeter: ExecutorSession, sessionId: string, ref: string];
};

/** Work that must end before a closed session's row is marked closed (a recording keeps its steps first). */
export type BeforeRowCloses = (session: ExecutorSession) => Promise<void>;

export class SessionRegistry {
  private readonly sessions = new Map<string, ExecutorSession>();
  private readonly events = new EventEmitter<RegistryEvents>();
  // Sessions welcomed once (a resume makes a session ready again; it opened once).
  private readonly opened = new WeakSet<ExecutorSession>();
  private readonly beforeRowCloses: BeforeRowCloses[] = [];
  /** What every session is given: one object for all of them (a fleet holds thousands). */
  private readonly sessionDeps: SessionDeps;

  constructor(private readonly deps: SessionRegistryDeps) {
    // First in line: what the others hear of a session, it has already counted.
    this.events.on('ready', (session) => this.opening(session));
    this.events.on('closed', (session, output) => this.closing(session, output));
    this.events.on('resumeAsked', (greeter, sessionId, ref) => this.resume(greeter, sessionId, ref));
    deps.notices?.on('revoke', (notice) => this.closeKey(notice.keyId));
    const { config, health } = deps;
    this.sessionDeps = {
      otp: config.otp,
      apiUrl: () => this.deps.apiUrl?.(),
      store: deps.store,
      instanceId: deps.instanceId,
      log: deps.log,
      unavailable: (err) => health?.report(err) ?? false,
      events: this.events,
    };
  }

  /** Subscribes to what happens to sessions; answers the unsubscribe. */
  on<K extends keyof RegistryEvents>(event: K, listener: (...args: RegistryEvents[K]) => void): () => void {
    const heard = listener as Parameters<typeof this.events.on>[1];
    this.events.on(event, heard);
    return () => this.events.off(event, heard);
  }

  /** `task` runs (to its end, failed or not) for every closed session before its row is marked closed. */
  beforeRowClose(task: BeforeRowCloses): void {
    this.beforeRowCloses.push(task);
  }

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): ExecutorSession | undefined {
    return this.sessions.get(id);
  }

  /** Every session held here, by id. */
  get all(): ReadonlyMap<string, ExecutorSession> {
    return this.sessions;
  }

  /** A new socket whose key was accepted at the upgrade. */
  connect(principal: Principal, conn: Connection): ExecutorSession {
    const session = new ExecutorSession(principal, conn, this.sessionDeps);
    this.sessions.set(session.id, session);
    if (this.deps.phase.stopping) session.close(CloseCode.goingAway, 'service shutting down');
    return session;
  }

  /** Closes at once every session of this process opened with the key. */
  closeKey(keyId: string): void {
    for (const session of this.sessions.values()) {
      if (session.principal.keyId === keyId) session.close(CloseCode.unauthorized, 'API key revoked');
    }
  }

  /** `greeter` becomes a session transferred from another process (its id from now on). */
  transferredIn(greeter: ExecutorSession, session: TransferredSession): void {
    this.sessions.delete(greeter.id);
    greeter.becomeTransferred(session);
    this.sessions.set(greeter.id, greeter);
  }

  private opening(session: ExecutorSession): void {
    if (this.opened.has(session)) return;
    this.opened.add(session);
    const { principal } = session;
    this.deps.log.info('session opened', {
      sessionId: session.id,
      projectId: principal.projectId,
      keyId: principal.keyId,
      maxParallel: session.maxParallel,
    });
    this.deps.events?.sessionOpened();
  }

  /**
   * hello.resumeSessionId on a new connection: the session, if this process holds it, is resumed on
   * that connection (only by a key of the same project); otherwise another process may hold it (the
   * executor reconnected through a load balancer, or was told to by a drain), unless this one drains.
   */
  private resume(greeter: ExecutorSession, sessionId: string, ref: string): void {
    const target = this.sessions.get(sessionId);
    const sameProject = target?.principal.projectId === greeter.principal.projectId;
    if (target && target !== greeter && target.resumable && sameProject) {
      this.sessions.delete(greeter.id);
      greeter.switchTo(target, ref);
      return;
    }
    if (target || this.deps.phase.draining) return greeter.refuseResume(sessionId, ref);
    this.events.emit('resumeElsewhere', greeter, sessionId, ref);
  }

  private closing(session: ExecutorSession, output: SessionOutput): void {
    const { log, store } = this.deps;
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    // Sessions that never got their welcome (refused, hello missing) were not counted as opened.
    if (this.opened.has(session)) this.deps.events?.sessionClosed(output.code);
    const { code, reason, transferred } = output;
    log.info('session closed', {
      sessionId: session.id,
      projectId: session.principal.projectId,
      code,
      reason,
      ...(transferred ? { transferred } : {}),
    });
    // Transferred: another process holds the session's row and runs now.
    if (transferred) return;
    Promise.allSettled(this.beforeRowCloses.map((task) => task(session)))
      .then(() => store.closeSession(session.id, code, reason))
      .catch((err) => log.error('could not record a closed session', { sessionId: session.id, err }));
  }
}
