// The database's side of the outage classification (the logic lives in the kernel's src/unavailable.ts,
// where the one error normaliser can use it).
export { isDatabaseUnavailable, someInChain } from '../unavailable.js';
