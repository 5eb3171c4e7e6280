// What each ai/* call costs its project's AI allowance (docs/ai.md, "The quota"): declared here once,
// by the REST routes (`charge`, applied by the Api before the handler) and the MCP tools that are
// doors onto them (`charge`, applied by the MCP server before the call). The console is a person's
// view and charges nothing.
import type { RouteCharge } from '../rest/route.js';
import { AI_COSTS } from '../tiers.js';

export const AI_CHARGES = {
  failures: { operation: 'failures.list', cost: 1 },
  triage: { operation: 'runs.triage', cost: 1 },
  bugDraft: { operation: 'bugs.draft', cost: 1 },
  correctionsList: { operation: 'corrections.list', cost: 1 },
  correctionSet: { operation: 'corrections.set', cost: 1 },
  correctionDelete: { operation: 'corrections.delete', cost: 1 },
  rulesList: { operation: 'rules.list', cost: 1 },
  ruleCreate: { operation: 'rules.create', cost: 1 },
  ruleGet: { operation: 'rules.get', cost: 1 },
  ruleDelete: { operation: 'rules.delete', cost: 1 },
  flaky: { operation: 'flaky', cost: AI_COSTS.history },
  healing: { operation: 'healing', cost: AI_COSTS.history },
  // Charged by the handler once the requirement is found (an unknown one is a 404 that costs nothing),
  // before the model is asked.
  testCaseDraft: { operation: 'test_case_draft', cost: AI_COSTS.model, by: 'handler' },
} as const satisfies Record<string, RouteCharge>;
