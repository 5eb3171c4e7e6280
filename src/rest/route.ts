// One declarative definition per route: its scope, its schemas and its handler. The same definitions
// register the Koa routes, validate requests and describe the API (/openapi.json, src/rest/openapi.ts).
// Every endpoint of /api/v1 is a RouteDef: resourceRoutes (src/rest/resource/) writes the five CRUD
// ones from a resource definition, route() wraps the ones written by hand.

import Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import { hasScope, type Principal, type Scope } from '../auth/principal.js';
import { errors } from '../errors.js';
import { type BoundedValidator, compileBounded } from '../validation/bounded.js';
import type { JsonSchema } from '../validation/schema-registry.js';
import type { BodyOf, QueryOf } from '../validation/schema-types.js';
import { compileTextFields } from '../validation/text-fields.js';
import { etagOf, type IfMatch, parseIfMatch } from './conditional.js';
import {
  checkIdempotencyKey,
  IDEMPOTENCY_HEADER,
  type IdempotencyScope,
  type IdempotencyStore,
  requestHash,
} from './idempotency.js';

export type { JsonSchema };

/** A handler's answer already serialised (a cached read): sent as application/json as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A handler's answer in another representation the route declares (`alternates`): sent as it is. */
export class Representation {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

/** Another representation of a route's success answer, for /openapi.json (the handler picks it). */
export interface Alternate {
  contentType: string;
  schema: JsonSchema;
  /** When it is answered: the query or Accept header that asks for it. */
  description: string;
}
export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** The query of a route that declares no query type (RouteDef<Body, Q>): plain values, read with care. */
export type Query = Record<string, unknown>;

export type { BodyOf, QueryOf };

export interface RouteContext<Body = unknown, Q extends Query = Query> {
  principal: Principal;
  params: Record<string, string>;
  /** The query, once its schema passed it (see QueryOf). */
  query: Q;
  /** The body, once the `body` schema passed it (see BodyOf); `{}` when none was sent. */
  body: Body;
  /** The If-Match header, parsed (routes marked `conditional`). */
  ifMatch: IfMatch;
  koa: Koa.Context;
  /**
   * Charges the route's declared `charge` (once; nothing when it declares none). Only a route whose
   * charge is made `by: 'handler'` calls it; the Api charges the others before their handler.
   */
  charge(): Promise<void>;
}

/**
 * What a route costs its project against a metered allowance (the ai/* routes: the AI quota,
 * docs/ai.md). The Api charges it through its RouteMeter once the request is valid, before the
 * handler; `by: 'handler'` leaves the moment to the handler (ctx.charge()), for a route that first
 * finds whether there is anything to work on (a draft's requirement). A refused charge is the
 * meter's error (402), and the handler never runs.
 */
export interface RouteCharge {
  /** The name the charge is counted under. */
  operation: string;
  cost: number;
  by?: 'handler';
}

/** Where the Api sends routes' charges: the ai room's quota (AiMeter), wired in src/service.ts. */
export interface RouteMeter {
  charge(projectId: string, operation: string, cost: number): Promise<void>;
}

/**
 * A route. `Body` and `Q` are the types of what its `body` and `query` schemas accept (BodyOf,
 * QueryOf); the route's own schemas are what make them true at run time, since the router validates
 * before it calls the handler.
 */
export interface RouteDef<Body = unknown, Q extends Query = Query> {
  method: Method;
  /** Koa-style path relative to /api/v1, e.g. `/tests/cases/:id`. */
  path: string;
  /** The least scope the key needs; 'none' for routes anyone may call. */
  auth: Scope | 'none';
  summary: string;
  /** Longer text for the API description. */
  description?: string;
  tag: string;
  /** Name of the operation in /openapi.json (derived from method and path when absent). */
  operationId?: string;
  body?: JsonSchema;
  /** Fields of a multipart/form-data body, for routes that stream the body themselves (uploads). */
  multipart?: JsonSchema;
  /**
   * The handler reads the request body itself, as a stream (an imported report): the JSON body parser
   * leaves it alone. `bodyTypes` then says, for the API description, what it takes.
   */
  rawBody?: boolean;
  /** Media types of a body the handler reads itself (`rawBody`), each with its schema. */
  bodyTypes?: Alternate[];
  /** An object schema of query parameters; values arrive as strings and are coerced. */
  query?: JsonSchema;
  /** Success status; 200 unless said. */
  status?: number;
  /** Schema of the success body; none for answers without a JSON body (204, redirects, files). */
  response?: JsonSchema;
  /** Media type of a success body that is not JSON (a file download), for the API description. */
  responseType?: string;
  /** Other representations of the success body (a JUnit report of a run, say), for the API description. */
  alternates?: Alternate[];
  /** Error statuses this route may answer beyond those every route of its kind may (see openapi.ts). */
  errors?: number[];
  /** The answer is one versioned record: it carries an ETag (its `version` in quotes). */
  etag?: boolean;
  /** Honours If-Match: a write based on a stale revision is refused with 412. */
  conditional?: boolean;
  /** May change things while the caller's project is archived (lifecycle routes). */
  allowArchived?: boolean;
  /**
   * The answer holds a secret shown once (a new key). Such an answer is never stored for
   * Idempotency-Key replays: a retry gets 409 naming what was created, never the secret again.
   */
  secretAnswer?: boolean;
  /** Middleware run after the scope check and before validation (e.g. a multipart parser). */
  before?: Koa.Middleware[];
  /** What a call costs its project against a metered allowance (see RouteCharge); /openapi.json lists 402. */
  charge?: RouteCharge;
  handler(ctx: RouteContext<Body, Q>): Promise<unknown> | unknown;
}

/**
 * Declares a route whose handler reads a typed body or query: `route<ApiKeyCreate>({ body:
 * ApiKeyCreateSchema, handler: ({ body }) => ... })`. The answer is a plain RouteDef, as the Api and
 * /openapi.json take every route alike (they never look inside the handler's types).
 */
export function route<Body = unknown, Q extends Query = Query>(def: RouteDef<Body, Q>): RouteDef {
  return def;
}

export interface RouterOptions {
  prefix?: string;
  /** Where Idempotency-Key answers are kept; without it the header is ignored. */
  idempotency?: IdempotencyStore;
}

/** The body's check, bounded in cost (validation/bounded.ts); too deep to check is a 400 too. */
function checksBody(
  validate: BoundedValidator,
  data: unknown,
  bytes: number | undefined,
): ReturnType<BoundedValidator> {
  try {
    return validate(data, 'body', bytes);
  } catch {
    throw errors.validation('The request nests too deeply to be checked');
  }
}

export class Api {
  readonly routes: RouteDef[] = [];
  private rawBodyPaths?: Array<{ method: string; pattern: RegExp }>;

  /** `meter`: where the routes' declared charges go (required once a route declares one). */
  constructor(private readonly meter?: RouteMeter) {}

  /** A route matching this request reads its body itself (`rawBody`): the JSON parser must not. */
  readsOwnBody(method: string, path: string, prefix = '/api/v1'): boolean {
    this.rawBodyPaths ??= this.routes
      .filter((d) => d.rawBody)
      .map((d) => ({
        method: d.method.toUpperCase(),
        pattern: new RegExp(`^${prefix}${d.path.replace(/:\w+/g, '[^/]+')}$`),
      }));
    return this.rawBodyPaths.some((r) => r.method === method && r.pattern.test(path));
  }

  add(...defs: RouteDef[]): this {
    this.routes.push(...defs);
    return this;
  }

  /**
   * The routes as Koa middleware: one router per resource (the first path segment after the
   * prefix), and a request is matched against its resource's routes only. (@koa/router tries every
   * route of a router on every request; with all of them in one, matching was a tenth of a cached
   * read's time.) A path that no route matches falls through to the next middleware.
   */
  middleware(options: RouterOptions = {}): Koa.Middleware {
    const prefix = options.prefix ?? '/api/v1';
    const byResource = new Map<string, RouteDef[]>();
    for (const def of this.routes) {
      const resource = resourceOf(def.path);
      byResource.set(resource, [...(byResource.get(resource) ?? []), def]);
    }
    const handlers = new Map<string, Koa.Middleware>();
    for (const [resource, defs] of byResource) {
      const router = this.router(defs, prefix, options);
      handlers.set(resource, compose([router.routes(), router.allowedMethods({ throw: false })]) as Koa.Middleware);
    }
    return (koa, next) => {
      if (!koa.path.startsWith(`${prefix}/`)) return next();
      const handler = handlers.get(resourceOf(koa.path.slice(prefix.length)));
      return handler ? handler(koa, next) : next();
    };
  }

  /** The route's charge as a function of the call (charging at most once), or none. */
  private chargeOf(def: RouteDef): ((principal: Principal) => () => Promise<void>) | undefined {
    const { charge } = def;
    if (!charge) return undefined;
    const { meter } = this;
    if (!meter) throw new Error(`${def.method.toUpperCase()} ${def.path} declares a charge, and the Api has no meter`);
    return (principal) => {
      let charged: Promise<void> | undefined;
      return () => (charged ??= meter.charge(principal.projectId, charge.operation, charge.cost));
    };
  }

  private router(defs: RouteDef[], prefix: string, options: RouterOptions): Router {
    const router = new Router({ prefix });
    for (const def of defs) {
      router[def.method](def.path, accessCheck(def), ...(def.before ?? []), this.endpoint(def, options));
    }
    return router;
  }

  /** The route's handler behind its checks: the request read, the charge made, the answer written; a POST under an Idempotency-Key once. */
  private endpoint(def: RouteDef, options: RouterOptions): Koa.Middleware {
    const chargeOf = this.chargeOf(def);
    const readInput = inputReader(def);
    return async (koa) => {
      const principal = koa.state.principal as Principal | undefined;
      const input = readInput(koa);
      const run = async () => {
        const charge = chargeOf && principal ? chargeOf(principal) : noCharge;
        if (chargeOf && def.charge?.by !== 'handler') await charge();
        const result = await def.handler({ principal: principal!, params: koa.params, ...input, koa, charge });
        answer(koa, def, result);
      };
      if (def.method !== 'post' || !options.idempotency || !principal) return run();
      const idempotencyKey = koa.get(IDEMPOTENCY_HEADER);
      if (!idempotencyKey) return run();
      checkIdempotencyKey(idempotencyKey);
      await withIdempotency(
        options.idempotency,
        koa,
        { keyId: principal.keyId, method: 'POST', path: koa.path, key: idempotencyKey },
        run,
        Boolean(def.secretAnswer),
      );
    };
  }
}

/** Refuses a request the route's scope or its project's archive does not allow. */
function accessCheck(def: RouteDef): Koa.Middleware {
  // Not async: a refusal thrown here still becomes a rejection (koa-compose), and a pass costs no promise.
  return (koa, next) => {
    const principal = koa.state.principal as Principal | undefined;
    if (def.auth !== 'none') {
      if (!principal) throw errors.unauthorized(koa.state.authError);
      if (!hasScope(principal, def.auth)) {
        throw errors.forbidden(`This needs a key with scope "${def.auth}"; this key has "${principal.scope}"`);
      }
      if (principal.projectStatus === 'archived' && def.method !== 'get' && !def.allowArchived) {
        throw errors.conflict(`Project ${principal.projectId} is archived and read-only; restore it to change things`, {
          projectStatus: 'archived',
        });
      }
    }
    return next();
  };
}

/** What a handler reads of the request: its query and body once the route's schemas passed them, its If-Match. */
type RouteInput = Pick<RouteContext, 'query' | 'body' | 'ifMatch'>;

/** Reads a request's input as the route declares it; a query or body its schemas refuse is a 400. */
function inputReader(def: RouteDef): (koa: Koa.Context) => RouteInput {
  const validateBody = def.body ? compileBounded(def.body) : undefined;
  // Query strings are text: coerced to the declared types (a repeated parameter, or a single one,
  // becomes an array where the schema says array), defaults filled, then checked like a body.
  const validateQuery = def.query ? compileTextFields(def.query, { lists: true }) : undefined;
  return (koa) => {
    let query = { ...koa.query } as Record<string, unknown>;
    if (validateQuery) {
      const checked = validateQuery(query, 'query');
      if (!checked.ok) throw errors.validation('Invalid query parameters', checked.errors);
      query = checked.value;
    }
    const body = (koa.request as { body?: unknown }).body ?? {};
    if (validateBody) {
      // The declared length spares counting the values of a large body (absent when chunked).
      const checked = checksBody(validateBody, body, koa.request.length);
      if (!checked.ok) throw errors.validation('Invalid request body', checked.errors);
    }
    const ifMatch = def.conditional ? parseIfMatch(koa.get('if-match') || undefined) : undefined;
    return { query, body, ifMatch };
  };
}

/** Writes a handler's answer: the body it returned, as its kind says; 204 when it returned and wrote nothing. */
function answer(koa: Koa.Context, def: RouteDef, result: unknown): void {
  // A handler answers by returning the body; one that wrote the response itself returns nothing.
  if (result === undefined) {
    if (koa.body === undefined) koa.status = 204;
    return;
  }
  koa.status = def.status ?? 200;
  if (result instanceof Representation) {
    koa.set('Content-Type', result.contentType);
    koa.body = result.text;
  } else if (result instanceof JsonText) {
    // The header itself, before the body: Koa then skips its own type lookup.
    koa.set('Content-Type', 'application/json; charset=utf-8');
    koa.body = result.text;
  } else {
    koa.body = result;
    const version = (result as { version?: unknown }).version;
    if (def.etag && typeof version === 'number') koa.set('ETag', etagOf(version));
  }
}

const noCharge = async () => {};

/** `/otp/runs/:id` → `otp`. */
function resourceOf(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

async function withIdempotency(
  store: IdempotencyStore,
  koa: Koa.Context,
  scope: IdempotencyScope,
  run: () => Promise<void>,
  secretAnswer: boolean,
) {
  const files = (koa.request as { files?: unknown }).files;
  const claim = await store.claim(
    scope,
    requestHash({ body: (koa.request as { body?: unknown }).body ?? null, files: describeFiles(files) }),
  );
  if (claim.kind === 'replay') {
    const answer = claim.answer;
    if (answer.redacted) {
      throw errors.conflict(
        'This request was already carried out; its answer held a secret that is shown only once, so it is not repeated',
        { id: (answer.body as { id?: string } | null)?.id ?? null, location: answer.headers.location ?? null },
      );
    }
    koa.status = answer.status;
    koa.body = answer.body ?? undefined;
    koa.set(answer.headers);
    koa.set('Idempotent-Replayed', 'true');
    return;
  }
  try {
    await run();
  } catch (err) {
    await store.release(scope).catch(() => {});
    throw err;
  }
  if (koa.status >= 200 && koa.status < 300) {
    const id = (koa.body as { id?: unknown } | undefined)?.id;
    await store.complete(scope, koa.status, secretAnswer ? { id } : koa.body, koa.response.headers, secretAnswer);
  } else await store.release(scope);
}

/** Uploaded files take part in the request hash by name, size and type. */
function describeFiles(files: unknown): unknown {
  if (!files || typeof files !== 'object') return null;
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(files as Record<string, unknown>)) {
    const list = Array.isArray(value) ? value : [value];
    out[field] = list.map((f: { originalFilename?: string; size?: number; mimetype?: string } | null) => [
      f?.originalFilename ?? null,
      f?.size ?? null,
      f?.mimetype ?? null,
    ]);
  }
  return out;
}
