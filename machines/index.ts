export * from './types.js';
export * from './vars.js';
export * from './counts.js';
export { runMachine, strayResultReason, DEFAULT_CANCEL_REASON, type RunContext } from './run.machine.js';
export { sessionMachine, type SessionContext } from './session.machine.js';
