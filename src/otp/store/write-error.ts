// A failed write as the engine may repeat it to executors and in a run's reason: PostgreSQL's own
// message, without the statement knex puts in front of it (with every bound value, which for a
// batch of step results is the whole batch).
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
  const cut = err.message.lastIndexOf(' - ');
  const message = typeof code === 'string' && cut >= 0 ? err.message.slice(cut + 3) : err.message;
  return new WriteError(`the database refused the write: ${message}`.slice(0, 500), code, { cause: err });
}
