import { route, type QueryOf, type RouteDef } from '../../rest/route.js';
import type { Config } from '../../config.js';
import type { OtpEngine } from '../engine/engine.js';
import type { RunRequest } from '../runs/planner.js';
import { RUN_STATUSES } from '../../../machines/types.js';
import { OTP_VERSION } from '../protocol/frames.js';
import { ProtocolSchema, RunPageSchema, RunRequestSchema, RunSchema, RunTraceSchema, SessionPageSchema, SessionSchema } from './schemas.js';
import type { RunViews } from '../store/run-views.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import type { RunViewCache } from '../store/run-view-cache.js';

export const runsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { enum: [...RUN_STATUSES] },
    testCaseId: { type: 'string', pattern: '^tc_', maxLength: 100, description: 'Only runs that include this test case' },
  },
} as const;
type RunsQuery = QueryOf<typeof runsQuery>;

export const sessionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageQueryProperties, status: { enum: ['open', 'closed', 'all'], default: 'open' } },
} as const;
type SessionsQuery = QueryOf<typeof sessionsQuery>;

export interface OtpRoutesDeps {
  engine: OtpEngine;
  config: Config;
  views: RunViews;
  /** Finished runs, served from memory. */
  runViews: RunViewCache;
}

export function otpRoutes({ engine, config, views, runViews }: OtpRoutesDeps): RouteDef[] {
  const tag = 'otp';
  const { otp } = config;
  return [
    {
      method: 'get', path: '/otp/protocol', auth: 'none', tag, operationId: 'getOtpProtocol', response: ProtocolSchema,
      summary: 'Protocol version and limits',
      handler: () => ({
        version: OTP_VERSION,
        websocketPath: '/otp',
        keepaliveSec: otp.keepaliveSec,
        maxSteps: otp.maxSteps,
        stepTimeoutMs: otp.stepTimeoutMs,
        maxFrameBytes: otp.maxFrameBytes,
        pongTimeoutMs: otp.pongTimeoutMs,
        helloTimeoutMs: otp.helloTimeoutMs,
        resumeWindowMs: otp.resumeWindowMs,
      }),
    },
    // The body's type is the planner's RunRequest, written beside runRequestSchema (its twin).
    route<RunRequest>({
      method: 'post', path: '/otp/runs', auth: 'write', tag, status: 202, body: RunRequestSchema, response: RunSchema,
      operationId: 'startOtpRun', errors: [404],
      description: 'With testRunId (an open test run of the project: 404 when unknown, 409 when closed), one result per test case is recorded in it when the run finishes; finishTestRun then closes it.',
      summary: 'Start a run of test cases or a plan on an executor session: `running` at once when a session has room, else `queued` until one has',
      handler: ({ principal, body }) => engine.createRun(principal, body),
    }),
    route<unknown, RunsQuery>({
      method: 'get', path: '/otp/runs', auth: 'read', tag,
      query: runsQuery,
      operationId: 'listOtpRuns', response: RunPageSchema,
      summary: 'List runs, newest last',
      handler: ({ principal, query }) => views.runs(principal.projectId, query),
    }),
    {
      method: 'get', path: '/otp/runs/:id', auth: 'read', tag, operationId: 'getOtpRun', response: RunSchema,
      summary: 'A run with its counts and every step (status, duration, error, evidence, usedLocator, actual)',
      handler: ({ principal, params }) =>
        runViews.read(principal.projectId, params.id, () => views.run(principal.projectId, params.id)),
    },
    {
      method: 'get', path: '/otp/runs/:id/trace', auth: 'read', tag, operationId: 'getOtpRunTrace', response: RunTraceSchema,
      summary: "The run machine's transitions (event, from-state, to-state, time), the last 500, kept with the run",
      description: 'While the run is in flight, the process that drives it answers from memory; any other process answers the copy written every OTP_TRACE_FLUSH_MS (1 s). A finished run answers the trace written with its verdict.',
      handler: ({ principal, params }) => engine.watch.runTrace(principal.projectId, params.id),
    },
    {
      method: 'post', path: '/otp/runs/:id/cancel', auth: 'write', tag, operationId: 'cancelOtpRun', response: RunSchema,
      summary: 'Cancel a queued or running run; 409 when it has already finished',
      handler: ({ principal, params }) => engine.cancelRun(principal, params.id),
    },
    route<unknown, SessionsQuery>({
      method: 'get', path: '/otp/sessions', auth: 'read', tag,
      query: sessionsQuery,
      operationId: 'listOtpSessions', response: SessionPageSchema,
      summary: 'Executor sessions of the project (connected ones unless status says otherwise)',
      handler: ({ principal, query }) => views.sessions(principal.projectId, query),
    }),
    {
      method: 'get', path: '/otp/sessions/:id', auth: 'read', tag, operationId: 'getOtpSession', response: SessionSchema,
      summary: 'One executor session, open or closed (with its close code and reason)',
      handler: ({ principal, params }) => views.session(principal.projectId, params.id),
    },
  ];
}
