// Server-sent events for the console's pages. What feeds them: the notices PostgreSQL already carries
// between processes (db/migrations/008 announces every run created, claimed, finished, asked to cancel
// or whose trace was flushed, and every session opened or closed, whoever changed it), and, for runs
// this process drives, the engine itself after every transition. A stream carries only names of
// things that changed in its own project (`runs-changed`, `run-changed`, `sessions-changed`,
// `session-changed`, with the ids of the runs or sessions concerned as data); the page
// then asks for its fragment again, with its own key. Events are coalesced per stream (at most one of
// each name per THROTTLE_MS), so a fast run costs a page a few refreshes a second, not one per step.
import type { ServerResponse } from 'node:http';
import type { Notice } from '../db/notifier.js';

export type LiveEvent = 'runs-changed' | 'run-changed' | 'sessions-changed' | 'session-changed';

const THROTTLE_MS = 150;
const MAX_IDS = 20;
// Comments keep proxies (and the browser) from closing an idle stream.
const KEEPALIVE_MS = 20_000;

interface Stream {
  projectId: string;
  runId?: string;
  /** The session a page follows: its machine's changes, pings and pongs included (`session-changed`). */
  sessionId?: string;
  res: ServerResponse;
  /** Events to send, each with the ids of what changed (a few at most: ids beyond MAX_IDS are dropped). */
  pending: Map<LiveEvent, Set<string>>;
  timer?: NodeJS.Timeout;
  lastSent: number;
}

export class LiveHub {
  private readonly byProject = new Map<string, Set<Stream>>();
  private readonly keepalive: NodeJS.Timeout;

  constructor() {
    this.keepalive = setInterval(() => {
      for (const streams of this.byProject.values()) for (const s of streams) s.res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.keepalive.unref();
  }

  get size(): number {
    let n = 0;
    for (const streams of this.byProject.values()) n += streams.size;
    return n;
  }

  /** A notice from any process (or a trigger). */
  notice(notice: Notice): void {
    if (notice.kind === 'run-live') {
      this.runChanged(notice.runId, notice.projectId);
      this.emit(notice.projectId, 'sessions-changed', notice.runId); // runs in flight per session
    } else if (notice.kind === 'session-live') {
      this.emit(notice.projectId, 'sessions-changed', notice.sessionId);
    } else if (notice.kind === 'run-view') {
      // Evidence of a run changed; the notice names no project, but a stream follows a run only of its own.
      for (const streams of this.byProject.values())
        for (const s of streams) if (s.runId === notice.runId) this.mark(s, 'run-changed', notice.runId);
    }
  }

  /** A transition of a run of this process, or a notice about a run. */
  runChanged(runId: string, projectId: string): void {
    const streams = this.byProject.get(projectId);
    if (!streams) return;
    for (const s of streams) {
      this.mark(s, 'runs-changed', runId);
      if (s.runId === runId) this.mark(s, 'run-changed', runId);
    }
  }

  /**
   * The machine of a session of this process changed (the engine's RunWatch): detached and resumed
   * change no row, so no notice tells of them. A keepalive round trip concerns only its own page.
   */
  sessionChanged(sessionId: string, projectId: string, kind: 'lifecycle' | 'keepalive'): void {
    for (const s of this.byProject.get(projectId) ?? []) {
      if (kind === 'lifecycle') this.mark(s, 'sessions-changed', sessionId);
      if (s.sessionId === sessionId) this.mark(s, 'session-changed', sessionId);
    }
  }

  private emit(projectId: string, event: LiveEvent, id: string): void {
    for (const s of this.byProject.get(projectId) ?? []) this.mark(s, event, id);
  }

  /** Opens a stream on a raw response (Koa's ctx.respond = false: a piped body logs a premature close per disconnect). */
  open(res: ServerResponse, projectId: string, runId?: string, sessionId?: string): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    res.write(': connected\n\n');
    const stream: Stream = { projectId, runId, sessionId, res, pending: new Map(), lastSent: 0 };
    const set = this.byProject.get(projectId) ?? new Set();
    set.add(stream);
    this.byProject.set(projectId, set);
    const close = () => {
      clearTimeout(stream.timer);
      set.delete(stream);
      if (!set.size && this.byProject.get(projectId) === set) this.byProject.delete(projectId);
    };
    res.on('close', close);
    res.on('error', close);
  }

  private mark(stream: Stream, event: LiveEvent, id: string): void {
    const ids = stream.pending.get(event) ?? new Set<string>();
    if (ids.size < MAX_IDS) ids.add(id);
    stream.pending.set(event, ids);
    if (stream.timer) return;
    const wait = Math.max(0, stream.lastSent + THROTTLE_MS - Date.now());
    stream.timer = setTimeout(() => this.flush(stream), wait);
  }

  private flush(stream: Stream): void {
    stream.timer = undefined;
    stream.lastSent = Date.now();
    let out = '';
    for (const [event, ids] of stream.pending) out += `event: ${event}\ndata: ${[...ids].join(' ')}\n\n`;
    stream.pending.clear();
    if (out && !stream.res.destroyed) stream.res.write(out);
  }

  /** Ends every stream (the service is stopping). */
  close(): void {
    clearInterval(this.keepalive);
    for (const streams of this.byProject.values()) for (const s of streams) s.res.end();
    this.byProject.clear();
  }
}
