// The frame validators of the extension, generated from the protocol's registered schemas with the
// service's own Ajv configuration (src/validation/ajv.ts): one schema source, no eval in the worker.
import { otpSchemas, outboundMessageSchemas } from '../../src/otp/protocol/schemas/index.js';
import { standaloneValidators } from '../../src/validation/ajv.js';

/** An ES module exporting `validators`: the message schema id of each frame the service sends -> its check. */
export function validatorsSource(): string {
  const ids = [...new Set(Object.values(outboundMessageSchemas))];
  const code = standaloneValidators(otpSchemas, Object.fromEntries(ids.map((id) => [id, id])));
  return `${code}\nexport const validators = { ${ids.join(', ')} };\n`;
}
