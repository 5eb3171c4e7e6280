import type Koa from 'koa';
import type { Config } from '../../config.js';
import { runToCtrf } from '../../reports/ctrf.js';
import { runToJunit } from '../../reports/junit.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import { type QueryOf, Representation, type RouteContext, type RouteDef, route } from '../../rest/route.js';
import { OTP_VERSION } from '../protocol/frames.js';
import type { RunCommands } from '../runs/commands.js';
import { type RunRequest, runsQuery } from '../runs/request.js';
import { restTrace } from '../store/run-trace.js';
import type { RunViews } from '../store/run-views.js';
import {
  CtrfReportSchema,
  ProtocolSchema,
  RunPageSchema,
  RunRequestSchema,
  RunSchema,
  RunTraceSchema,
  SessionPageSchema,
  SessionSchema,
} from './schemas.js';

export const runQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      enum: ['json', 'junit', 'ctrf'],
      description:
        'json (the default): the run; junit: a JUnit XML report of it (also asked for by Accept: application/xml); ctrf: a CTRF JSON report',
    },
  },
} as const;
type RunQuery = QueryOf<typeof runQuery>;

type RunsQuery = QueryOf<typeof runsQuery>;

export const sessionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageQueryProperties, status: { enum: ['open', 'closed', 'all'], default: 'open' } },
} as const;
type SessionsQuery = QueryOf<typeof sessionsQuery>;

export interface OtpRoutesDeps {
  /** The run commands (src/otp/runs): what every door calls. */
  runs: RunCommands;
  config: Config;
  /** Executor sessions as REST shows them. */
  views: Pick<RunViews, 'session' | 'sessions'>;
  /** The bound OTP WebSocket port (0 until it is bound), for otpUrl. */
  otpPort?(): number;
}

export function otpRoutes(deps: OtpRoutesDeps): RouteDef[] {
  return [protocolRoute(deps), ...runRoutes(deps), ...sessionRoutes(deps)];
}

const tag = 'otp';

function protocolRoute({ config, otpPort }: OtpRoutesDeps): RouteDef {
  const { otp } = config;
  return {
    method: 'get',
    path: '/otp/protocol',
    auth: 'none',
    tag,
    operationId: 'getOtpProtocol',
    response: ProtocolSchema,
    summary: 'Protocol version and limits',
    handler: ({ koa }) => ({
      version: OTP_VERSION,
      websocketPath: '/otp',
      ...optional('otpUrl', otpUrlFor(config, otpPort?.() ?? 0, koa.hostname)),
      keepaliveSec: otp.keepaliveSec,
      maxSteps: otp.maxSteps,
      stepTimeoutMs: otp.stepTimeoutMs,
      maxFrameBytes: otp.maxFrameBytes,
      pongTimeoutMs: otp.pongTimeoutMs,
      helloTimeoutMs: otp.helloTimeoutMs,
      resumeWindowMs: otp.resumeWindowMs,
    }),
  };
}

function runRoutes(deps: OtpRoutesDeps): RouteDef[] {
  const { runs } = deps;
  return [
    // The body's type is the planner's RunRequest, written beside runRequestSchema (its twin).
    route<RunRequest>({
      method: 'post',
      path: '/otp/runs',
      auth: 'write',
      tag,
      status: 202,
      body: RunRequestSchema,
      response: RunSchema,
      operationId: 'startOtpRun',
      errors: [404],
      description:
        'With testRunId (an open test run of the project: 404 when unknown, 409 when closed), one result per test case is recorded in it when the run finishes; finishTestRun then closes it.',
      summary:
        'Start a run of test cases or a plan on an executor session: `running` at once when a session has room, else `queued` until one has',
      handler: ({ principal, body }) => runs.start(principal, body),
    }),
    route<unknown, RunsQuery>({
      method: 'get',
      path: '/otp/runs',
      auth: 'read',
      tag,
      query: runsQuery,
      operationId: 'listOtpRuns',
      response: RunPageSchema,
      summary: 'List runs, newest last',
      handler: ({ principal, query }) => runs.list(principal, query),
    }),
    route<unknown, RunQuery>({
      method: 'get',
      path: '/otp/runs/:id',
      auth: 'read',
      tag,
      operationId: 'getOtpRun',
      response: RunSchema,
      query: runQuery,
      summary: 'A run with its counts and every step (status, duration, error, evidence, usedLocator, actual)',
      alternates: [
        {
          contentType: 'application/xml',
          schema: { type: 'string', description: 'JUnit XML: one testcase per test case' },
          description: 'JUnit XML with format=junit or Accept: application/xml',
        },
        { contentType: 'application/json', schema: CtrfReportSchema, description: 'A CTRF report with format=ctrf' },
      ],
      handler: ({ principal, params, query, koa }) => readRun(deps, principal, params.id, query.format, koa),
    }),
    {
      method: 'get',
      path: '/otp/runs/:id/trace',
      auth: 'read',
      tag,
      operationId: 'getOtpRunTrace',
      response: RunTraceSchema,
      summary: "The run machine's transitions (event, from-state, to-state, time), the last 500, kept with the run",
      description:
        'While the run is in flight, the process that drives it answers from memory; any other process answers the copy written every OTP_TRACE_FLUSH_MS (1 s). A finished run answers the trace written with its verdict.',
      handler: async ({ principal, params }) => restTrace(await runs.trace(principal, params.id)),
    },
    {
      method: 'post',
      path: '/otp/runs/:id/cancel',
      auth: 'write',
      tag,
      operationId: 'cancelOtpRun',
      response: RunSchema,
      summary: 'Cancel a queued or running run; 409 when it has already finished',
      handler: ({ principal, params }) => runs.cancel(principal, params.id),
    },
  ];
}

function sessionRoutes({ views }: OtpRoutesDeps): RouteDef[] {
  return [
    route<unknown, SessionsQuery>({
      method: 'get',
      path: '/otp/sessions',
      auth: 'read',
      tag,
      query: sessionsQuery,
      operationId: 'listOtpSessions',
      response: SessionPageSchema,
      summary: 'Executor sessions of the project (connected ones unless status says otherwise)',
      handler: ({ principal, query }) => views.sessions(principal.projectId, query),
    }),
    {
      method: 'get',
      path: '/otp/sessions/:id',
      auth: 'read',
      tag,
      operationId: 'getOtpSession',
      response: SessionSchema,
      summary: 'One executor session, open or closed (with its close code and reason)',
      handler: ({ principal, params }) => views.session(principal.projectId, params.id),
    },
  ];
}

/** A run as asked for: JSON (the default), a JUnit report (format=junit or Accept: XML) or a CTRF report. */
async function readRun(
  { runs, config, views }: OtpRoutesDeps,
  principal: RouteContext['principal'],
  id: string,
  asked: RunQuery['format'],
  koa: Koa.Context,
): Promise<unknown> {
  const format = asked ?? (/\b(application|text)\/(junit\+)?xml\b/.test(koa.get('accept')) ? 'junit' : 'json');
  if (format === 'json') return runs.readJson(principal, id);
  const run = await runs.read(principal, id);
  const baseUrl = config.publicUrl ?? koa.origin;
  if (format === 'junit') return new Representation(runToJunit(run, baseUrl), 'application/xml; charset=utf-8');
  const session = run.sessionId
    ? await views.session(principal.projectId, run.sessionId).catch(() => undefined)
    : undefined;
  const browser = session ? [session.name ?? session.executor, session.version].filter(Boolean).join(' ') : undefined;
  return runToCtrf(run, { baseUrl, ...(browser ? { browser } : {}) });
}

/**
 * Where a client that sent a request to this host reaches OTP: OTP_PUBLIC_URL (a service behind a
 * proxy), else the bound WebSocket port on the same host; the browser extension connects there.
 */
function otpUrlFor(config: Config, port: number, hostname: string): string | undefined {
  if (config.otpPublicUrl) return config.otpPublicUrl;
  return port ? `ws://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}/otp` : undefined;
}

/** `{ [name]: value }`, or nothing when the value is unknown. */
function optional<K extends string>(name: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, string>);
}
