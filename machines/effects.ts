// How the machines' effect requests are answered.
//
// A machine requests an effect by emitting it (`emit`, seen through `actor.on`). An effect that
// takes time (a durable write) is answered by an event: one when it is done, one with the error's
// message when it failed. Whoever carries the effect out answers through `answer`, so src/ and the
// tests answer the same way.

/** The message of a thrown value, for the failure events and for logs. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return String(error);
}

/**
 * Sends `done` once `work` resolves, or `failed(message)` once it rejects. The failure is always
 * answered, never thrown: a machine waiting for the answer would otherwise wait for ever.
 */
export function answer<E>(
  work: PromiseLike<unknown>,
  send: (event: E) => void,
  done: NoInfer<E>,
  failed: (message: string) => NoInfer<E>,
): void {
  work.then(
    () => send(done),
    (error: unknown) => send(failed(errorMessage(error))),
  );
}
