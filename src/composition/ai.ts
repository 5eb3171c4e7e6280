// The ai room (docs/ai.md) as the service uses it: answers from run history (flakiness, quarantine,
// healing, model drafts and the AI quota), then failures, triage and bug drafts, charged through the
// same quota; failures are signed after each verdict, off the step path.
import { createHistoryAnswers, type HistoryAnswers } from '../ai/history-answers.js';
import { type Ai, createAi } from '../ai/index.js';
import type { Config } from '../config.js';
import type { ChangeEvents } from '../db/change-events.js';
import type { RunCommands } from '../otp/runs/commands.js';
import { RunFailureFacts } from '../otp/store/failure-facts.js';
import { RunHistoryStore } from '../otp/store/run-history.js';
import type { RunViews } from '../otp/store/run-views.js';
import { tenancy } from '../platform/tenancy.js';
import type { Holdings } from './artifacts.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

export function historyAnswers(
  config: Config,
  database: Database,
  parts: { events: ChangeEvents; holdings: Holdings },
): HistoryAnswers {
  const { db } = database;
  return createHistoryAnswers({
    db,
    config,
    history: new RunHistoryStore(db),
    tenants: { tenantOf: (projectId) => tenancy.tenantOfProject(db, projectId) },
    events: parts.events,
    ...parts.holdings.artifacts.aiPorts,
  });
}

export interface FailureParts {
  events: ChangeEvents;
  holdings: Holdings;
  aiHistory: HistoryAnswers;
  runs: RunCommands;
  views: RunViews;
  /** An absolute URL of a path of this service (links in bug drafts). */
  absolute(path: string): string;
}

export function failureAnswers(config: Config, database: Database, parts: FailureParts, teardown: Teardown): Ai {
  const { db, quietLog, notifier } = database;
  const { artifacts } = parts.holdings;
  const { runs, views } = parts;
  const ai = createAi({
    db,
    log: quietLog,
    meter: parts.aiHistory.meter,
    facts: new RunFailureFacts(db),
    events: parts.events,
    sweepMs: config.heartbeatMs,
    link: artifacts.link,
    bugLinks: artifacts.aiPorts.bugLinks,
    reader: {
      run: (principal, runId) => runs.read(principal, runId),
      session: (projectId, sessionId) => views.session(projectId, sessionId),
    },
    stores: {
      bug: artifacts.stores.get('bug')!,
      testResult: artifacts.stores.get('test_result')!,
      testCase: artifacts.stores.get('test_case')!,
    },
    absolute: parts.absolute,
  });
  teardown.add('failure signing', () => ai.stop());
  notifier.on('run-live', (notice) => ai.runChanged(notice.runId, notice.status));
  return ai;
}
