// The protocol's one list of error codes (machines/types.ts), for the rooms that may import only
// the protocol: the reference executor takes its step codes from here.
export { OtpErrorCode } from '../../../machines/types.js';
