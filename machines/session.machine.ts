// The session machine: one executor connection, from its hello to its close.
//
// Pure. Every effect is emitted (types.ts, SessionEffect) for the session, which listens with
// `actor.on('*', ...)`; the durable write `registerSession` is answered with an event. Answering a
// bad frame with an `error` frame is the session's job; this machine only counts invalid frames in
// a row.
//
// States
//   awaitingHello — waits for HELLO; `helloTimeout` without one closes with 4408 'no hello'.
//                   RESUME_ASKED (its hello resumes a session another process may hold) → resuming.
//   resuming      — the session is asked for (a draining holder may answer thousands in turn, so the
//                   hello timeout no longer runs). TRANSFERRED_IN → ready, with the welcome (resumed)
//                   and reattach; RESUME_REFUSED → awaitingHello (a plain hello may follow);
//                   `resumeAnswer` without either closes with 4408 'resume not answered'.
//   registering   — registerSession stores the session; welcome is sent on SESSION_REGISTERED.
//                   SESSION_NOT_REGISTERED closes with 1011, or 1013 when the database is unavailable
//                   (retryable: the executor was told E_DATABASE_UNAVAILABLE and says hello again later).
//   ready         — the session works. Keepalive substates:
//                     alive        —`keepalive`→ awaitingPong (entry: sendPing)
//                     awaitingPong —PONG→ alive; —`pongTimeout`→ close 4408 'keepalive timeout'
//                   SOCKET_CLOSED with a resume window (resumeWindowMs > 0) → detached (emits detach),
//                   unless the executor closed deliberately (1000, or 1005: a close frame without a code).
//                   RECONNECT_ELSEWHERE (the service drains) closes the socket with its code (4503) → detached.
//                   RESUME (the executor reconnected while the old connection looked alive): detach,
//                   then welcome (resumed) and reattach, as from `detached`.
//                   TRANSFER_OUT (another process asks for the session) → transferring (emits detach).
//   transferring  — the session's rows move to another process: what is sent is held, its runs are
//                   paused, it takes no run, no ping. TRANSFERRED_OUT → closed (4409 on the socket,
//                   output `transferred`); TRANSFER_CANCELLED → ready (reattach). Its socket dropping
//                   makes it detached, as from ready.
//   detached      — the socket is gone, the session waits for a new connection to RESUME it (emits
//                   sendWelcome resumed, then reattach → ready). No ping. `resumeWindow` without one
//                   ends the session with the close that detached it ('… not resumed within N ms').
//                   CLOSE ends it at once (nothing to close: no socket); so does TRANSFERRED_OUT.
//   closed        — final; output { code, reason, transferred? }.
// Anywhere before `closed`:
//   FRAME_INVALID counts a strike; maxInvalidFrames strikes in a row close with 4400.
//   FRAME_VALID, HELLO and PONG are valid frames and reset the count.
//   CLOSE (the service ends the session) closes with its code and reason.
//   SOCKET_CLOSED (the peer is gone) ends in `closed` without closeSocket.
import { assertEvent, assign, emit, setup } from 'xstate';
import {
  CloseCode,
  type HelloPayload,
  type SessionEffect,
  type SessionEvent,
  type SessionInput,
  type SessionOutput,
} from './types.js';

export interface SessionContext {
  keepaliveMs: number;
  pongTimeoutMs: number;
  helloTimeoutMs: number;
  maxInvalidFrames: number;
  /** The first HELLO and its frame id (welcome's ref), kept from HELLO until welcome is sent (an idle session holds neither). */
  hello: HelloPayload | null;
  helloRef: string | null;
  /** Invalid frames in a row. */
  strikes: number;
  /** Set when the session ends; the machine's output. In `detached`: why the socket went. */
  close: SessionOutput | null;
  /** How long a dropped session waits in `detached` to be resumed; 0: it closes at once. */
  resumeWindowMs: number;
  /** How long a hello resuming a session held elsewhere waits in `resuming`. */
  resumeAnswerMs: number;
}

// Why a session transferred to another process ends here (its socket, if still open, closes with it).
const TRANSFERRED = { code: CloseCode.sessionTakenOver, reason: 'session resumed on another service process' };

// Why a session being transferred is detached (its runs pause, it takes no run).
const MOVING = 'handing the session over to another process';

/** Actions that close the socket from this side: remember the output, then closeSocket. */
function closeWith(code: number, reason: string) {
  return [{ type: 'setClose', params: { code, reason } }, 'closeSocket'] as const;
}

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    input: {} as SessionInput,
    output: {} as SessionOutput,
    events: {} as SessionEvent,
    emitted: {} as SessionEffect,
  },
  actions: {
    // Effects, emitted for the session.
    registerSession: emit(({ context }) => ({ type: 'registerSession' as const, hello: context.hello! })),
    sendWelcome: emit(({ context }) => ({ type: 'sendWelcome' as const, ref: context.helloRef! })),
    sendResumedWelcome: emit(({ event }) => {
      assertEvent(event, ['RESUME', 'TRANSFERRED_IN']);
      return { type: 'sendWelcome' as const, ref: event.ref, resumed: true as const };
    }),
    detach: emit(({ context }) => ({ type: 'detach' as const, ...context.close! })),
    reattach: emit({ type: 'reattach' as const }),
    sendPing: emit({ type: 'sendPing' as const }),
    /** Closes with the output set just before (`setClose`). */
    closeSocket: emit(({ context }) => ({ type: 'closeSocket' as const, ...context.close! })),

    // Context updates (internal).
    setClose: assign({ close: (_, params: SessionOutput) => ({ code: params.code, reason: params.reason }) }),
    setTransferred: assign({ close: () => ({ ...TRANSFERRED, transferred: true as const }) }),
    countStrike: assign({ strikes: ({ context }) => context.strikes + 1 }),
    resetStrikes: assign({ strikes: () => 0 }),
    keepHello: assign((_, params: { hello: HelloPayload; ref: string }) => ({
      hello: params.hello,
      helloRef: params.ref,
      strikes: 0,
    })),
    forgetHello: assign({ hello: null, helloRef: null }),
  },
  guards: {
    lastStrike: ({ context }) => context.strikes + 1 >= context.maxInvalidFrames,
    // The session could not be stored because the database is unavailable: the executor may retry.
    retryable: ({ event }) => event.type === 'SESSION_NOT_REGISTERED' && event.retryable === true,
    // An executor that closes its socket itself (1000, or a close frame without a code: 1005) is done;
    // a connection that drops (1006, any other code) may come back.
    resumable: ({ context, event }) =>
      context.resumeWindowMs > 0 &&
      event.type === 'SOCKET_CLOSED' &&
      event.code !== CloseCode.normal &&
      event.code !== 1005,
  },
  delays: {
    keepalive: ({ context }) => context.keepaliveMs,
    pongTimeout: ({ context }) => context.pongTimeoutMs,
    helloTimeout: ({ context }) => context.helloTimeoutMs,
    resumeWindow: ({ context }) => context.resumeWindowMs,
    resumeAnswer: ({ context }) => context.resumeAnswerMs,
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    keepaliveMs: input.keepaliveMs,
    pongTimeoutMs: input.pongTimeoutMs,
    helloTimeoutMs: input.helloTimeoutMs,
    maxInvalidFrames: input.maxInvalidFrames,
    hello: null,
    helloRef: null,
    strikes: 0,
    close: null,
    resumeWindowMs: input.resumeWindowMs ?? 0,
    resumeAnswerMs: input.resumeAnswerMs ?? input.helloTimeoutMs,
  }),
  initial: 'awaitingHello',
  output: ({ context }) => context.close!,
  on: {
    FRAME_INVALID: [
      {
        guard: 'lastStrike',
        target: '.closed',
        actions: [
          'countStrike',
          {
            type: 'setClose',
            params: ({ context }) => ({
              code: CloseCode.protocolViolation,
              reason: `${context.strikes} invalid frames in a row`,
            }),
          },
          'closeSocket',
        ],
      },
      { actions: 'countStrike' },
    ],
    FRAME_VALID: { actions: 'resetStrikes' },
    // A HELLO after the first (answered E_UNEXPECTED by src) and a PONG nobody waits for are
    // still well-formed frames.
    HELLO: { actions: 'resetStrikes' },
    PONG: { actions: 'resetStrikes' },
    CLOSE: {
      target: '.closed',
      actions: [
        { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
        'closeSocket',
      ],
    },
    SOCKET_CLOSED: {
      target: '.closed',
      actions: { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
    },
  },
  states: {
    awaitingHello: {
      after: {
        helloTimeout: { target: 'closed', actions: closeWith(CloseCode.timeout, 'no hello') },
      },
      on: {
        HELLO: {
          target: 'registering',
          actions: { type: 'keepHello', params: ({ event }) => ({ hello: event.hello, ref: event.ref }) },
        },
        RESUME_ASKED: { target: 'resuming' },
      },
    },

    resuming: {
      after: {
        resumeAnswer: { target: 'closed', actions: closeWith(CloseCode.timeout, 'resume not answered') },
      },
      on: {
        TRANSFERRED_IN: { target: 'ready', actions: ['resetStrikes', 'sendResumedWelcome', 'reattach'] },
        RESUME_REFUSED: { target: 'awaitingHello' },
      },
    },

    registering: {
      entry: 'registerSession',
      on: {
        SESSION_REGISTERED: { target: 'ready', actions: ['sendWelcome', 'forgetHello'] },
        SESSION_NOT_REGISTERED: [
          {
            // The database is unavailable: the executor says hello again later (1013 Try Again Later).
            guard: 'retryable',
            target: 'closed',
            actions: closeWith(CloseCode.tryAgainLater, 'database unavailable: connect again later'),
          },
          { target: 'closed', actions: closeWith(CloseCode.internalError, 'the session could not be stored') },
        ],
      },
    },

    ready: {
      initial: 'alive',
      on: {
        SOCKET_CLOSED: {
          guard: 'resumable',
          target: 'detached',
          actions: [
            { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
            'detach',
            'resetStrikes',
          ],
        },
        RECONNECT_ELSEWHERE: {
          target: 'detached',
          actions: [
            { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
            'closeSocket',
            'detach',
          ],
        },
        TRANSFER_OUT: {
          target: 'transferring',
          actions: [{ type: 'setClose', params: { code: TRANSFERRED.code, reason: MOVING } }, 'detach'],
        },
        RESUME: {
          target: 'ready',
          reenter: true,
          actions: [
            {
              type: 'setClose',
              params: { code: CloseCode.sessionTakenOver, reason: 'session resumed on another connection' },
            },
            'detach',
            'resetStrikes',
            'sendResumedWelcome',
            'reattach',
          ],
        },
      },
      states: {
        alive: {
          after: { keepalive: { target: 'awaitingPong' } },
        },
        awaitingPong: {
          entry: 'sendPing',
          after: {
            pongTimeout: {
              target: '#session.closed',
              actions: closeWith(CloseCode.timeout, 'keepalive timeout'),
            },
          },
          on: {
            PONG: { target: 'alive', actions: 'resetStrikes' },
          },
        },
      },
    },

    transferring: {
      on: {
        TRANSFERRED_OUT: { target: 'closed', actions: ['setTransferred', 'closeSocket'] },
        TRANSFER_CANCELLED: { target: 'ready', actions: 'reattach' },
        // Already detached: what the socket's end changes is only how the session ends.
        SOCKET_CLOSED: {
          guard: 'resumable',
          target: 'detached',
          actions: { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
        },
        RECONNECT_ELSEWHERE: {
          target: 'detached',
          actions: [
            { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
            'closeSocket',
          ],
        },
      },
    },

    detached: {
      after: {
        resumeWindow: {
          target: 'closed',
          actions: {
            type: 'setClose',
            params: ({ context }) => ({
              code: context.close!.code,
              reason: `${context.close!.reason}; not resumed within ${context.resumeWindowMs} ms`,
            }),
          },
        },
      },
      on: {
        RESUME: { target: 'ready', actions: ['sendResumedWelcome', 'reattach'] },
        // Without a socket there is nothing to close: the session just ends.
        CLOSE: {
          target: 'closed',
          actions: { type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) },
        },
        TRANSFERRED_OUT: { target: 'closed', actions: 'setTransferred' },
        SOCKET_CLOSED: {},
        FRAME_INVALID: {},
      },
    },

    closed: { type: 'final' },
  },
});
