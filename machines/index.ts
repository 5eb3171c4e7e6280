export * from './types.js';
export * from './vars.js';
export * from './counts.js';
export * from './effects.js';
export { runMachine } from './run.machine.js';
export { strayResultReason, nextToSend, DEFAULT_CANCEL_REASON, type RunContext } from './run.steps.js';
export { sessionMachine, type SessionContext } from './session.machine.js';
