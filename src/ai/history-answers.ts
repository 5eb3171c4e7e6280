// Flakiness, quarantine, healing, drafts by a model and the AI quota (docs/ai.md): the part of the
// ai/* group that reads run history through its RunHistory port (run-history.ts). src/ai/index.ts adds
// failures, triage and bug drafts, charged through this part's quota.

import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import type { ChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import type { RouteDef } from '../rest/route.js';
import { consoleViews } from './console-views.js';
import { DraftService, type DraftSink, type RequirementSource } from './drafts/draft-service.js';
import { draftRoutes } from './drafts/routes.js';
import { listFlakyCases } from './flaky/flaky-service.js';
import { QuarantineStore } from './flaky/quarantine-store.js';
import { flakyRoutes } from './flaky/routes.js';
import type { FlakyQuery } from './flaky/schema.js';
import { HealingService, type TestCaseEditor } from './healing/healing-service.js';
import { HealingStore } from './healing/healing-store.js';
import { healingRoutes } from './healing/routes.js';
import type { AiMeter } from './meter.js';
import { AiQuota, type ProjectTenants } from './quota/ai-quota.js';
import { usageRoutes } from './quota/routes.js';
import type { RunHistory } from './run-history.js';

export { flakyQuery } from './flaky/schema.js';

export interface HistoryAnswersDeps {
  db: Db;
  config: Pick<Config, 'ai' | 'limits'>;
  history: RunHistory;
  tenants: ProjectTenants;
  testCases: TestCaseEditor;
  requirements: RequirementSource;
  drafts: DraftSink;
  events: ChangeEvents;
  /** Whether the project has the test case. */
  testCaseExists(projectId: string, testCaseId: string): Promise<boolean>;
}

export interface HistoryAnswers {
  routes: RouteDef[];
  meter: AiMeter;
  quota: AiQuota;
  quarantines: QuarantineStore;
  healing: HealingService;
  history: RunHistory;
  /** The console's views of the group (ConsoleData members). */
  console: ReturnType<typeof consoleViews>;
  /** GET /ai/flaky as a function (svc_list_flaky; its charge is the tool's, charges.ts). */
  flaky(principal: Principal, query: Partial<FlakyQuery>): Promise<unknown>;
}

export function createHistoryAnswers(deps: HistoryAnswersDeps): HistoryAnswers {
  const quota = new AiQuota(deps.db, deps.tenants, deps.config.limits);
  const quarantines = new QuarantineStore(deps.db, deps.config.ai.quarantineDays);
  const healing = new HealingService(deps.history, new HealingStore(deps.db, deps.events), deps.testCases);
  const drafts = new DraftService(deps.config.ai.model, deps.requirements, deps.drafts);
  return {
    routes: [
      ...usageRoutes(quota),
      ...flakyRoutes({ history: deps.history, quarantines, testCaseExists: deps.testCaseExists }),
      ...healingRoutes(healing),
      ...draftRoutes(drafts),
    ],
    meter: quota,
    quota,
    quarantines,
    healing,
    history: deps.history,
    console: consoleViews(deps.history, quarantines, healing),
    flaky: (principal, query) => listFlakyCases({ history: deps.history, quarantines }, principal, query),
  };
}
