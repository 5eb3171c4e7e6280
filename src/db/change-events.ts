// The port through which a store reports a change to webhook subscribers (docs/webhooks.md): it calls
// `record(trx, event)` inside the transaction that makes the change, so the event is durable exactly
// when the change is. Declared here, in the lowest room every store may import; implemented by the
// webhook-delivery room (its outbox) and wired in src/service.ts. A store built without it reports
// nothing (`noChangeEvents`).
import type { Knex } from 'knex';

/** Event types that are not an artifact's `<kind>.created|updated|deleted`. */
export const EventType = {
  /** An OTP run has its verdict (any final status). */
  runFinished: 'run.finished',
  /** A test result was recorded: from an OTP run, or created through the API. */
  testResultRecorded: 'test_result.recorded',
  /** A test run was closed: by an OTP run with finishTestRun, or through the API. */
  testRunClosed: 'test_run.closed',
  /** An executor's recording ended (the recordings room). */
  recordingFinished: 'recording.finished',
  /** A release's readiness verdict changed (ready, at_risk, blocked; docs/releases.md). */
  releaseReadinessChanged: 'release.readiness_changed',
  /** A failure signature was seen for the first time in the project (the ai room's scan). */
  failureClusterNew: 'failure_cluster.new',
  /** A locator fix was proposed from run history (GET /ai/healing). */
  healingProposed: 'healing.proposed',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const ARTIFACT_OPERATIONS = ['created', 'updated', 'deleted'] as const;
export type ArtifactOperation = (typeof ARTIFACT_OPERATIONS)[number];

export interface ChangeEvent {
  /** `run.finished`, `bug.created`, ...: one of docs/webhooks.md. */
  type: string;
  tenantId: string;
  projectId: string;
  /** The event's `data`, as its schema in /openapi.json describes it (`RunFinishedEvent`, ...). */
  data: Record<string, unknown>;
}

export interface ChangeEvents {
  /**
   * Writes the events inside `trx`, the transaction of the change they report: they commit with it
   * or not at all. Cheap when no subscription of the project wants them (one indexed read).
   */
  record(trx: Knex, events: ChangeEvent | readonly ChangeEvent[]): Promise<void>;
  /**
   * False when no subscription of the project is active: a change may then be written without
   * `record`, and without a transaction of its own. Answered from memory nearly always (a hot path,
   * the finish of every run, asks it).
   */
  mayRecord(projectId: string): Promise<boolean>;
  /** A subscription of the project is being written in this process (inside its transaction). */
  subscriptionsChanging(projectId: string): void;
}

export const noChangeEvents: ChangeEvents = {
  record: async () => {},
  mayRecord: async () => false,
  subscriptionsChanging: () => {},
};
