// Every frame the service sends is checked against the protocol's own schema of its type before
// anything acts on it: ajv's standalone validators, compiled at build time from the schemas the
// service validates with (extension/build/validators.ts), since an MV3 worker may not eval.
import { validators } from 'otp:validators';
import type { OutboundMessage } from '../../../src/otp/protocol/schemas/messages.js';
import { OUTBOUND_TYPES, outboundMessageSchemas } from '../../../src/otp/protocol/schemas/messages.js';

export type Checked = { ok: true; frame: OutboundMessage } | { ok: false; problems: string[] };

const TYPES: ReadonlySet<string> = new Set(OUTBOUND_TYPES);

/** Checks a parsed frame; answers it typed, or each problem as `field: message`. */
export function checkInbound(frame: unknown): Checked {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame))
    return { ok: false, problems: ['(root): frame must be a JSON object'] };
  const type = (frame as { type?: unknown }).type;
  if (typeof type !== 'string' || !TYPES.has(type))
    return { ok: false, problems: [`type: ${JSON.stringify(type)} is no frame the service sends`] };
  const validate = validators[outboundMessageSchemas[type as keyof typeof outboundMessageSchemas]]!;
  if (validate(frame)) return { ok: true, frame: frame as OutboundMessage };
  const problems = (validate.errors ?? []).map(
    (e) => `${e.instancePath.slice(1).replace(/\//g, '.') || '(root)'}: ${e.message}`,
  );
  return { ok: false, problems };
}
