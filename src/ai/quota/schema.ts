// The answer of GET /ai/usage.
import { registerSchema } from '../../rest/schemas.js';

export const AiUsageSchema = registerSchema({
  $id: 'AiUsage',
  title: 'AiUsage',
  description: "The tenant's monthly allowance of AI calls and what is used of it this month (UTC)",
  type: 'object',
  additionalProperties: false,
  required: ['tier', 'allowance', 'used', 'remaining', 'byOperation', 'periodStart', 'renewsAt', 'costs', 'upgradeUrl'],
  properties: {
    tier: { type: 'string', description: "The tenant's tier (free, pro, enterprise)" },
    allowance: { type: 'integer', description: 'AI calls allowed this month' },
    used: { type: 'integer', description: 'AI calls charged this month (a model-backed call counts its cost)' },
    remaining: { type: 'integer' },
    byOperation: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Calls charged per operation',
    },
    periodStart: { type: 'string', format: 'date-time' },
    renewsAt: {
      type: 'string',
      format: 'date-time',
      description: 'When the allowance starts again (the first of next month, UTC)',
    },
    costs: {
      type: 'object',
      additionalProperties: false,
      required: ['history', 'model'],
      properties: {
        history: { type: 'integer', description: 'Cost of an answer from run history (flaky, healing, ...)' },
        model: { type: 'integer', description: 'Cost of an answer by a language model (POST /ai/test-cases/draft)' },
      },
    },
    upgradeUrl: { type: 'string' },
  },
});
