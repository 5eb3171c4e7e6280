// The session machine: one executor connection, from its hello to its close.
//
// Pure. Every effect is emitted (types.ts, SessionEffect) for the session, which listens with
// `actor.on('*', ...)`; the durable write `registerSession` is answered with an event. Answering a
// bad frame with an `error` frame is the session's job; this machine only counts invalid frames in
// a row.
//
// States
//   awaitingHello — waits for HELLO; `helloTimeout` without one closes with 4408 'no hello'.
//   registering   — registerSession stores the session; welcome is sent on SESSION_REGISTERED.
//                   SESSION_NOT_REGISTERED closes with 1011 and the write's message.
//   ready         — the session works. Keepalive substates:
//                     alive        —`keepalive`→ awaitingPong (entry: sendPing)
//                     awaitingPong —PONG→ alive; —`pongTimeout`→ close 4408 'keepalive timeout'
//   closed        — final; output { code, reason }.
// Anywhere before `closed`:
//   FRAME_INVALID counts a strike; maxInvalidFrames strikes in a row close with 4400.
//   FRAME_VALID, HELLO and PONG are valid frames and reset the count.
//   CLOSE (the service ends the session) closes with its code and reason.
//   SOCKET_CLOSED (the peer is gone) ends in `closed` without closeSocket.
import { assign, emit, setup } from 'xstate';
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
  /** The first HELLO and its frame id (welcome's ref), kept from HELLO until welcome is sent. */
  hello: HelloPayload | null;
  helloRef: string | null;
  /** Invalid frames in a row. */
  strikes: number;
  /** Set when the session ends; the machine's output. */
  close: SessionOutput | null;
}

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
    sendPing: emit({ type: 'sendPing' as const }),
    /** Closes with the output set just before (`setClose`). */
    closeSocket: emit(({ context }) => ({ type: 'closeSocket' as const, ...context.close! })),

    // Context updates (internal).
    setClose: assign({ close: (_, params: SessionOutput) => ({ code: params.code, reason: params.reason }) }),
    countStrike: assign({ strikes: ({ context }) => context.strikes + 1 }),
    resetStrikes: assign({ strikes: () => 0 }),
    keepHello: assign((_, params: { hello: HelloPayload; ref: string }) => ({
      hello: params.hello,
      helloRef: params.ref,
      strikes: 0,
    })),
  },
  guards: {
    lastStrike: ({ context }) => context.strikes + 1 >= context.maxInvalidFrames,
  },
  delays: {
    keepalive: ({ context }) => context.keepaliveMs,
    pongTimeout: ({ context }) => context.pongTimeoutMs,
    helloTimeout: ({ context }) => context.helloTimeoutMs,
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
      actions: [{ type: 'setClose', params: ({ event }) => ({ code: event.code, reason: event.reason }) }, 'closeSocket'],
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
      },
    },

    registering: {
      entry: 'registerSession',
      on: {
        SESSION_REGISTERED: { target: 'ready', actions: 'sendWelcome' },
        SESSION_NOT_REGISTERED: {
          target: 'closed',
          actions: [
            {
              type: 'setClose',
              params: ({ event }) => ({ code: CloseCode.internalError, reason: event.message }),
            },
            'closeSocket',
          ],
        },
      },
    },

    ready: {
      initial: 'alive',
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

    closed: { type: 'final' },
  },
});
