// Structured one-line JSON logs on stderr. Errors are described, not dumped: the first line of their
// message with connection strings masked and the statement knex puts in front of a driver's message
// cut off, their code, one level of cause; a stack only for errors of this program's own (no `code`),
// never for a driver's or the system's (their frames are the library's internals).
import { format } from 'node:util';
import { isDatabaseUnavailable, isStorageUnavailable } from './unavailable.js';

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Connection strings (postgres://user:secret@host/db and the like) in any text. */
const CONNECTION_STRING = /\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]+:[^\s/@]*@[^\s'"]+/gi;
/** knex's "<statement> - <driver message>": the statement (and its values) is not the log's business. */
const STATEMENT_PREFIX =
  /^\s*(select|insert|update|delete|with|begin|commit|rollback|create|alter|drop|lock|set|show|copy|truncate|values|savepoint|release|listen|notify|unlisten)\b/i;

/** Text of a library's or an error's message as a log may carry it. */
export function safeText(text: string): string {
  let line = text.split('\n')[0];
  const cut = line.lastIndexOf(' - ');
  if (STATEMENT_PREFIX.test(line) && cut >= 0) line = line.slice(cut + 3);
  return line.replace(CONNECTION_STRING, (url) => url.replace(/\/\/[^@]*@/, '//***@')).slice(0, 1000);
}

export function describeError(err: Error, depth = 0): Record<string, unknown> {
  const code = (err as { code?: unknown }).code;
  const out: Record<string, unknown> = { name: err.name, message: safeText(String(err.message ?? '')) };
  if (code !== undefined) out.code = code;
  // An outage's stack is the driver's or the SDK's internals; a bug's is the place to look.
  else if (err.stack && !isDatabaseUnavailable(err) && !isStorageUnavailable(err))
    out.stack = err.stack.split('\n').slice(1).join('\n').replace(CONNECTION_STRING, '***');
  if (err.cause instanceof Error && depth < 2) out.cause = describeError(err.cause, depth + 1);
  return out;
}

export function createLogger(
  level: 'silent' | 'info' | 'debug',
  sink: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const write = (lvl: string, msg: string, fields?: Record<string, unknown>) => {
    const extra = fields ? { ...fields } : {};
    if (extra.err instanceof Error) extra.err = describeError(extra.err);
    sink(`${JSON.stringify({ t: new Date().toISOString(), level: lvl, msg: safeText(msg), ...extra })}\n`);
  };
  return {
    info: (msg, fields) => level !== 'silent' && write('info', msg, fields),
    debug: (msg, fields) => level === 'debug' && write('debug', msg, fields),
    error: (msg, fields) => level !== 'silent' && write('error', msg, fields),
  };
}

/**
 * A logger for lines an outsider can provoke at will (refused credentials), or that a fault repeats
 * (a library's complaint on every connect while the database is down): at most one line per `key`
 * every `intervalMs`, the next one saying how many were left out meanwhile.
 */
export function throttledLog(
  log: Logger,
  intervalMs = 60_000,
  level: 'info' | 'error' = 'info',
): (key: string, msg: string, fields?: Record<string, unknown>) => void {
  const seen = new Map<string, { at: number; suppressed: number }>();
  return (key, msg, fields) => {
    const now = Date.now();
    const last = seen.get(key);
    if (last && now - last.at < intervalMs) {
      last.suppressed++;
      return;
    }
    // Forget old keys so that the map stays small whatever the callers send.
    if (seen.size > 10_000) seen.clear();
    seen.set(key, { at: now, suppressed: 0 });
    log[level](msg, { ...fields, ...(last?.suppressed ? { suppressed: last.suppressed } : {}) });
  };
}

/**
 * Node prints process warnings (deprecations, a library's "upgrade Node" notice) as plain text on
 * stderr; they go through the logger instead, once per distinct warning.
 */
export function routeProcessWarnings(log: Logger): void {
  const once = throttledLog(log, 24 * 3600_000);
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    once(`${warning.name}:${warning.message}`, 'process warning', {
      name: warning.name,
      warning: safeText(warning.message.replace(/\s+/g, ' ')),
    }),
  );
}

/**
 * Libraries that print with console.* (oidc-provider's runtime notice, anything else) go through the
 * logger: one JSON line, the first line of the text, each distinct text at most once a minute.
 * Call before importing them: some print as their module loads.
 */
export function routeConsole(log: Logger): void {
  const info = throttledLog(log, 60_000, 'info');
  const error = throttledLog(log, 60_000, 'error');
  const to =
    (write: typeof info) =>
    (...args: unknown[]) => {
      const text = safeText(format(...args));
      write(text, 'library output', { source: 'console', text });
    };
  // A library's warning (oidc-provider's "Unsupported runtime" on Node.js 20, say) is no error of the service.
  console.log = console.info = console.warn = to(info);
  console.debug = (...args: unknown[]) =>
    log.debug('library output', { source: 'console', text: safeText(format(...args)) });
  console.error = to(error);
}
