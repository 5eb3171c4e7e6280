// One schema per event type (docs/webhooks.md), registered once per process: each is a component of
// /openapi.json and the shape a receiver can validate a delivery's body against. The envelope is the
// Standard Webhooks one (type, timestamp, data) with the event's id (also the webhook-id header) and
// its project; `data` is the record or run the event is about, as the REST API answers it.

import { HealingProposalSchema } from '../ai/healing/schema.js';
import { artifactDefinitions } from '../artifacts/index.js';
import { webhookEventTypes } from '../artifacts/webhooks/webhooks.js';
import { ARTIFACT_OPERATIONS, EventType } from '../db/change-events.js';
import { RunSummarySchema } from '../otp/http/schemas.js';
import { type JsonSchema, registerSchema } from '../validation/schema-registry.js';

const RecordingSchema = registerSchema({
  $id: 'WebhookRecording',
  title: 'WebhookRecording',
  description: 'A recording an executor made and finished (the recordings resource has the whole of it)',
  type: 'object',
  additionalProperties: true,
  required: ['id', 'stepCount', 'finishedAt'],
  properties: {
    id: { type: 'string', description: 'Id of the recording' },
    sessionId: { type: ['string', 'null'], description: 'The OTP session that recorded it' },
    name: { type: 'string' },
    stepCount: { type: 'integer', minimum: 0, description: 'Steps recorded' },
    testCaseId: { type: ['string', 'null'], description: 'The test case made from it, when one was' },
    startedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
  },
});

const FailureClusterNewSchema = registerSchema({
  $id: 'WebhookFailureCluster',
  title: 'WebhookFailureCluster',
  description: 'A failure signature seen for the first time in the project (GET /ai/failures lists its cluster)',
  type: 'object',
  additionalProperties: false,
  required: ['signature', 'code', 'action', 'locator', 'message', 'firstSeen', 'example'],
  properties: {
    signature: { type: 'string', pattern: '^sig_', description: 'The signature' },
    code: { type: 'string', description: 'Error code of the failed step' },
    action: { type: 'string', description: 'Its action (assert:text for an assert of kind text)' },
    locator: { type: 'string', description: "Its locator's identity ('' when none)" },
    message: { type: 'string', description: 'The message, normalised' },
    firstSeen: { type: 'string', format: 'date-time', description: 'When the run that showed it finished' },
    example: {
      type: 'object',
      additionalProperties: false,
      required: ['runId', 'stepIndex', 'testCaseId'],
      description: 'The failed step that showed it',
      properties: {
        runId: { type: 'string' },
        stepIndex: { type: 'integer', minimum: 0 },
        testCaseId: { type: 'string' },
      },
    },
  },
});

interface EventDoc {
  type: string;
  schemaName: string;
  summary: string;
  data: { $ref: string };
}

const pascal = (text: string) => text.replace(/(^|[_.-])(\w)/g, (_, __, c: string) => c.toUpperCase());

const fixed: EventDoc[] = [
  {
    type: EventType.runFinished,
    schemaName: 'RunFinishedEvent',
    summary: 'An OTP run has its verdict (passed, failed, cancelled or error); data is the run without its steps',
    data: RunSummarySchema,
  },
  {
    type: EventType.testResultRecorded,
    schemaName: 'TestResultRecordedEvent',
    summary: 'A test result was recorded, by an OTP run with a testRunId or through the API; data is the result',
    data: { $ref: 'TestResult' },
  },
  {
    type: EventType.testRunClosed,
    schemaName: 'TestRunClosedEvent',
    summary: 'A test run was closed, by an OTP run with finishTestRun or through the API; data is the test run',
    data: { $ref: 'TestRun' },
  },
  {
    type: EventType.recordingFinished,
    schemaName: 'RecordingFinishedEvent',
    summary: 'An executor finished a recording; data is the recording',
    data: RecordingSchema,
  },
  {
    type: EventType.releaseReadinessChanged,
    schemaName: 'ReleaseReadinessChangedEvent',
    summary:
      "A release's readiness verdict changed (ready, at_risk, blocked), as computed after a change to its results, bugs, requirements or links, or when read; data is the readiness (previousVerdict: the one before)",
    data: { $ref: 'ReleaseReadiness' },
  },
  {
    type: EventType.failureClusterNew,
    schemaName: 'FailureClusterNewEvent',
    summary:
      'A failure signature was seen for the first time in the project (a new cluster of GET /ai/failures); data is the signature and its first failed step',
    data: FailureClusterNewSchema,
  },
  {
    type: EventType.healingProposed,
    schemaName: 'HealingProposedEvent',
    summary: 'A locator fix was proposed from run history (GET /ai/healing); data is the proposal',
    data: HealingProposalSchema,
  },
];

const verbs = {
  created: 'was created',
  updated: 'was changed',
  deleted: 'was deleted (data is the record as it last was)',
};
const perKind: EventDoc[] = artifactDefinitions
  .filter((def) => def.events !== false)
  .flatMap((def) =>
    ARTIFACT_OPERATIONS.map((op) => ({
      type: `${def.kind}.${op}`,
      schemaName: `${def.schemaName}${pascal(op)}Event`,
      summary: `A ${def.label} ${verbs[op]} through the API; data is the ${def.label}`,
      data: { $ref: def.schemaName },
    })),
  );

function envelope(doc: EventDoc): JsonSchema {
  return {
    $id: doc.schemaName,
    title: doc.schemaName,
    description: `Webhook event ${doc.type}: ${doc.summary}. Headers: webhook-id (the event id), webhook-timestamp, webhook-signature (Standard Webhooks).`,
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', 'timestamp', 'tenantId', 'projectId', 'data'],
    properties: {
      id: {
        type: 'string',
        pattern: '^evt_',
        description: 'Id of the event; the same in webhook-id and on every retry: receivers deduplicate on it',
      },
      type: { const: doc.type },
      timestamp: { type: 'string', format: 'date-time', description: 'When the change happened' },
      tenantId: { type: 'string' },
      projectId: { type: 'string' },
      data: doc.data,
    },
  };
}

/** Every event type with the name of its schema, in the order of docs/webhooks.md. */
export const webhookEvents: ReadonlyArray<{ type: string; schema: string; summary: string }> = [
  ...fixed,
  ...perKind,
].map((doc) => {
  registerSchema(envelope(doc));
  return { type: doc.type, schema: doc.schemaName, summary: doc.summary };
});

// The subscription's list of events and this catalogue are one list: a type without a schema is a bug.
const documented = new Set(webhookEvents.map((e) => e.type));
const missing = webhookEventTypes(artifactDefinitions.filter((d) => d.events !== false).map((d) => d.kind)).filter(
  (t) => t !== '*' && !documented.has(t),
);
if (missing.length) throw new Error(`webhook events without a schema: ${missing.join(', ')}`);

const STANDARD_WEBHOOK_HEADERS = [
  ['webhook-id', 'The event id: the same on every retry and redelivery (deduplicate on it)'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed'],
  ['webhook-signature', 'v1,<base64 HMAC-SHA256>, one per live secret, space separated (Standard Webhooks)'],
] as const;

/**
 * The events as OpenAPI 3.1 `webhooks`: what a subscription's url receives, one POST per event type,
 * its body the event's schema (docs/webhooks.md).
 */
export function webhookOperations(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    webhookEvents.map(({ type, schema, summary }) => [
      type,
      {
        post: {
          operationId: `receive${pascal(type)}`,
          summary,
          tags: ['webhook events'],
          // No HTTP credential: the receiver checks the signature headers.
          security: [],
          parameters: STANDARD_WEBHOOK_HEADERS.map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
          },
          responses: {
            '2XX': { description: 'Received: the delivery succeeded' },
            '4XX': { description: 'Refused: the delivery is tried again on the schedule, then fails' },
            '5XX': { description: 'Failed: the delivery is tried again on the schedule, then fails' },
          },
        },
      },
    ]),
  );
}
