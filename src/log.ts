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
