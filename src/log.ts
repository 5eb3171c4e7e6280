// Structured one-line JSON logs on stderr.
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: 'silent' | 'info' | 'debug'): Logger {
  const write = (lvl: string, msg: string, fields?: Record<string, unknown>) => {
    const extra = fields ? { ...fields } : {};
    if (extra.err instanceof Error) extra.err = { message: extra.err.message, stack: extra.err.stack };
    process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...extra }) + '\n');
  };
  return {
    info: (msg, fields) => level !== 'silent' && write('info', msg, fields),
    debug: (msg, fields) => level === 'debug' && write('debug', msg, fields),
    error: (msg, fields) => level !== 'silent' && write('error', msg, fields),
  };
}

/**
 * A logger for lines an outsider can provoke at will (refused credentials): at most one line per
 * `key` every `intervalMs`, the next one saying how many were left out meanwhile.
 */
export function throttledLog(log: Logger, intervalMs = 60_000): (key: string, msg: string, fields?: Record<string, unknown>) => void {
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
    log.info(msg, { ...fields, ...(last?.suppressed ? { suppressed: last.suppressed } : {}) });
  };
}
