// MCP over Streamable HTTP at /mcp, stateless: every POST gets a Server and a transport of its own
// (no session id), so any process answers any request. The caller is the principal the REST
// authentication resolved (an API key or an OAuth access token); none gets 401 with the
// WWW-Authenticate header MCP clients follow to the protected-resource metadata (RFC 9728) and on to
// OAuth. A tool's failure is a tool result with isError and the REST error body, never a transport error.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { hasScope, type Principal, SCOPES } from '../auth/principal.js';
import { AppError, ErrorCode, errors, failureLog, normaliseError } from '../errors.js';
import type { Logger } from '../log.js';
import { compileInput, type InputValidator } from './schemas.js';
import { type McpBackend, type ToolDef, tools } from './tools.js';

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface McpDeps {
  backend: McpBackend;
  log: Logger;
  /** The service's base URL (PUBLIC_URL or the bound listener) and the OAuth issuer. */
  baseUrl(): string;
  issuer(): string;
  version: string;
}

const compiled = new Map<string, InputValidator>(tools.map((t) => [t.name, compileInput(t.inputSchema)]));

function toolError(err: AppError): CallToolResult {
  const body = err.toBody();
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/** One per logger: an outage's tool failures are throttled across requests. */
const failureLogs = new WeakMap<Logger, ReturnType<typeof failureLog>>();
function logFailureOf(log: Logger) {
  let logFailure = failureLogs.get(log);
  if (!logFailure) failureLogs.set(log, (logFailure = failureLog(log)));
  return logFailure;
}

async function callTool(
  deps: McpDeps,
  principal: Principal,
  tool: ToolDef | undefined,
  name: string,
  args: unknown,
): Promise<CallToolResult> {
  try {
    if (!tool) throw errors.notFound('Tool', name);
    // The same refusals, in the same order, as a REST route of the same scope.
    if (!hasScope(principal, tool.scope))
      throw errors.forbidden(`${name} needs scope "${tool.scope}"; this credential has "${principal.scope}"`);
    if (principal.projectStatus === 'archived' && tool.scope !== 'read') {
      throw errors.conflict(`Project ${principal.projectId} is archived and read-only; restore it to change things`, {
        projectStatus: 'archived',
      });
    }
    const checked = compiled.get(tool.name)!(structuredClone(args ?? {}) as Record<string, unknown>);
    if (!checked.ok) throw errors.validation(`Invalid arguments of ${name}`, checked.errors);
    // A tool's declared charge, as the Api charges its route's: before the call (a refusal is 402).
    if (tool.charge) await deps.backend.ai.meter.charge(principal.projectId, tool.charge.operation, tool.charge.cost);
    const result = await tool.call(deps.backend, principal, checked.value);
    return {
      content: [{ type: 'text', text: JSON.stringify(result) }],
      structuredContent: result as Record<string, unknown>,
    };
  } catch (err) {
    const appError = normaliseError(err);
    logFailureOf(deps.log)('MCP tool failed', err, appError, { tool: name });
    return toolError(appError);
  }
}

function buildServer(deps: McpDeps, principal: Principal): Server {
  const server = new Server({ name: 'otp-service', version: deps.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: `${t.description} Needs scope ${t.scope}.`,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: { title: t.title, ...t.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args } = request.params;
    return callTool(
      deps,
      principal,
      tools.find((t) => t.name === name),
      name,
      args,
    );
  });
  return server;
}

/** The RFC 9728 document: the path-inserted one for /mcp, or the service's own at the root form. */
export function resourceMetadata(deps: Pick<McpDeps, 'baseUrl' | 'issuer'>, forMcp: boolean) {
  return {
    resource: forMcp ? `${deps.baseUrl()}${MCP_PATH}` : `${deps.baseUrl()}/`,
    authorization_servers: [deps.issuer()],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'OTP test protocol and artifact service',
    resource_documentation: `${deps.baseUrl()}/openapi.json`,
  };
}

/** Koa middleware serving /mcp and the protected-resource metadata; everything else passes on. */
export function mcpMiddleware(deps: McpDeps): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path === RESOURCE_METADATA_PATH || ctx.path === `${RESOURCE_METADATA_PATH}${MCP_PATH}`) {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = resourceMetadata(deps, ctx.path.endsWith(MCP_PATH));
      return;
    }
    if (ctx.path !== MCP_PATH) return next();
    const principal = ctx.state.principal as Principal | undefined;
    if (!principal) {
      const challenge = `Bearer resource_metadata="${deps.baseUrl()}${RESOURCE_METADATA_PATH}${MCP_PATH}"`;
      const message =
        ctx.state.authError ?? 'An API key or an OAuth access token is required (Authorization: Bearer ...)';
      throw new AppError(ErrorCode.unauthorized, message, {}, { headers: { 'WWW-Authenticate': challenge } });
    }
    const server = buildServer(deps, principal);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the answer itself; the status tells the error middleware a route matched.
    ctx.respond = false;
    ctx.status = 200;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, (ctx.request as { body?: unknown }).body);
  };
}
