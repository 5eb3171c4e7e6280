// step.result evidence.navigations (docs/protocol.md): the main document's navigations during a step,
// with the HTTP status of each or why it got none. Optional, added after 1.0 first shipped.
import type { JsonSchema } from './locator.js';

export const StepNavigationsSchema = {
  description:
    "Optional: the page's main-document navigations during the step, in order, each with its HTTP status, or the error that kept it from an answer. Triage reads a 5xx or 429 status, a connection, DNS or TLS error, or a navigation still waiting for its first byte as the environment (docs/ai.md).",
  type: 'array',
  maxItems: 20,
  items: {
    description: 'One navigation of the main frame.',
    type: 'object',
    properties: {
      url: { description: 'Where it went (without its query is enough).', type: 'string', maxLength: 2000 },
      status: {
        description: "The main document's HTTP status, when it answered.",
        type: 'integer',
        minimum: 100,
        maximum: 599,
      },
      statusText: {
        description: 'Its status line text, as the server sent it.',
        type: 'string',
        maxLength: 200,
      },
      error: {
        description:
          'Why it got no answer: the browser\'s error (net::ERR_CONNECTION_REFUSED, net::ERR_NAME_NOT_RESOLVED, net::ERR_CERT_..., ...), or "no response: still waiting for the first byte" when the step ended first.',
        type: 'string',
        maxLength: 500,
      },
    },
    required: ['url'],
    additionalProperties: false,
  },
} as const satisfies JsonSchema;
