// A failed write as the engine may repeat it to executors and in a run's reason: PostgreSQL's own
// message, without the statement knex puts in front of it (with every bound value, which for a
// batch of step results is the whole batch); nothing of a driver's or a socket's message.
export class WriteError extends Error {
  constructor(
    message: string,
    readonly code: unknown,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

export function writeError(err: unknown): Error {
  if (err instanceof WriteError || !(err instanceof Error)) return err instanceof Error ? err : new Error(String(err));
  const code = (err as { code?: unknown }).code;
  // PostgreSQL's own message only (an SQLSTATE says it is one), without the statement knex puts in
  // front; a driver's or socket's message may name the server's address or carry SQL: not repeated.
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code))
    return new WriteError('the database could not complete the write', code, { cause: err });
  const cut = err.message.lastIndexOf(' - ');
  const message = cut >= 0 ? err.message.slice(cut + 3) : err.message;
  return new WriteError(`the database refused the write: ${message}`.slice(0, 500), code, { cause: err });
}
