// How long the process an executor resumed on waits for another process to hand its session over
// (transfers.ts), and so how long that executor's new connection waits in `resuming` (session-actors.ts).

/** A holder that says nothing in this time may be gone: the resume is refused, unless it still heart-beats (then again). */
export const ANSWER_WAIT_MS = 5_000;
/** A holder that acknowledged is alive and answering asks in turn: waited for up to the resume window a drain gives. */
export const ACKED_WAIT_MS = 30_000;
/** The longest the asker waits for a session from another process. */
export const LONGEST_TRANSFER_WAIT_MS = ANSWER_WAIT_MS + ACKED_WAIT_MS;
