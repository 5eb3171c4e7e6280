// Schemas of what the OTP REST routes answer, registered for validation and /openapi.json: the views'
// (written beside them, src/otp/store/view-schemas.ts), their pages, the protocol's limits, a trace.

import { RUN_STATUSES } from '../../../machines/types.js';
import { pageSchema, registerSchema } from '../../rest/schemas.js';
import { runSchema, runSummarySchema, sessionSchema } from '../store/view-schemas.js';

// Registered there, as the run commands' own; re-exported for the routes (and registered at this point of /openapi.json).
export { RunRequestSchema } from '../runs/request.js';

export const ProtocolSchema = registerSchema({
  $id: 'OtpProtocol',
  title: 'OtpProtocol',
  description: 'Protocol version and limits',
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'websocketPath',
    'keepaliveSec',
    'maxSteps',
    'stepTimeoutMs',
    'maxFrameBytes',
    'pongTimeoutMs',
    'helloTimeoutMs',
    'resumeWindowMs',
  ],
  properties: {
    version: { type: 'string', description: 'OTP version carried in the envelope field otp' },
    websocketPath: { type: 'string', description: 'Path of the WebSocket endpoint on {ws_url}' },
    keepaliveSec: { type: 'integer', description: 'The service pings every this many seconds' },
    maxSteps: { type: 'integer', description: 'Most steps in one run' },
    stepTimeoutMs: { type: 'integer', description: 'Default time allowed per step' },
    maxFrameBytes: { type: 'integer', description: 'Largest frame' },
    pongTimeoutMs: { type: 'integer', description: 'A pong must come within this time' },
    helloTimeoutMs: { type: 'integer', description: 'hello must come within this time of connecting' },
    otpUrl: {
      type: 'string',
      description:
        'The WebSocket address of OTP as clients reach it: OTP_PUBLIC_URL when set (a service behind a proxy), else ws://{the host this request was sent to}:{the WebSocket port}/otp. Absent only while the WebSocket listener is not bound yet',
    },
    resumeWindowMs: {
      type: 'integer',
      description:
        'A session whose connection dropped may be resumed (hello.resumeSessionId) within this time; 0: sessions are not resumed',
    },
  },
});

export const RunSummarySchema = registerSchema(runSummarySchema);

export const RunSchema = registerSchema(runSchema);

export const RunPageSchema = pageSchema('OtpRunPage', RunSummarySchema, 'A page of OTP runs');

export const SessionSchema = registerSchema(sessionSchema);

export const SessionPageSchema = pageSchema('OtpSessionPage', SessionSchema, 'A page of executor sessions');

export const RunTraceSchema = registerSchema({
  $id: 'OtpRunTrace',
  title: 'OtpRunTrace',
  description:
    "The run machine's transitions, oldest first: the last 500 are kept with the run (older ones are counted in dropped)",
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'status', 'transitions', 'dropped', 'live'],
  properties: {
    runId: { type: 'string', pattern: '^otr_' },
    status: { enum: [...RUN_STATUSES] },
    transitions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['at', 'event', 'from', 'to'],
        properties: {
          at: { type: 'string', format: 'date-time' },
          event: {
            type: 'string',
            description:
              'The event; `always` for an eventless transition, `after <delay>` for a delayed one, `xstate.init` for the start',
          },
          from: { type: ['string', 'null'], description: 'The state left (dotted path); null for the start' },
          to: { type: 'string', description: 'The state entered (dotted path)' },
          cursor: {
            type: 'integer',
            minimum: 0,
            description:
              "The run's cursor after the transition: the stepIndex of the step.exec sent on entering `running`, else of the next step to send; every step before it has its outcome. Absent from traces written before it was recorded",
          },
        },
      },
    },
    dropped: { type: 'integer', description: 'Older transitions no longer kept' },
    live: {
      type: 'boolean',
      description:
        'True: read from the process that drives the run; false: as last written (every OTP_TRACE_FLUSH_MS while it runs, and with its verdict)',
    },
  },
});

export const CtrfReportSchema = registerSchema({
  $id: 'CtrfReport',
  title: 'CtrfReport',
  description:
    'A run as a Common Test Report Format document (its own schema: the ctrf package, or ctrf.io): one test per test case',
  type: 'object',
  required: ['reportFormat', 'specVersion', 'results'],
  properties: {
    reportFormat: { const: 'CTRF' },
    specVersion: { type: 'string' },
    results: {
      type: 'object',
      required: ['tool', 'summary', 'tests'],
      properties: {
        tool: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        summary: { type: 'object', description: 'Counts of the tests by status, and the start and stop times' },
        tests: { type: 'array', items: { type: 'object' }, description: 'One test per test case' },
      },
    },
  },
});
