// One declarative definition per route: its scope, its schemas and its handler. The same definitions
// register the Koa routes, validate requests and describe the API.
import type Koa from 'koa';
import Router from '@koa/router';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { ajv, formatErrors } from '../otp/validators.js';
import { errors } from '../errors.js';
import { hasScope, type Principal, type Scope } from '../auth/principal.js';

export type JsonSchema = Record<string, unknown>;
type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteContext<Body = any> {
  principal: Principal;
  params: Record<string, string>;
  query: Record<string, any>;
  body: Body;
  koa: Koa.Context;
}

export interface RouteDef {
  method: Method;
  /** Koa-style path relative to /api/v1, e.g. `/tests/cases/:id`. */
  path: string;
  /** The least scope the key needs; 'none' for routes anyone may call. */
  auth: Scope | 'none';
  summary: string;
  tag: string;
  body?: JsonSchema;
  /** Fields of a multipart/form-data body, for routes that stream the body themselves (uploads). */
  multipart?: JsonSchema;
  /** An object schema of query parameters; values arrive as strings and are coerced. */
  query?: JsonSchema;
  /** Success status; 200 unless said. */
  status?: number;
  response?: JsonSchema;
  /** Middleware run after the scope check and before validation (e.g. a multipart parser). */
  before?: Koa.Middleware[];
  handler(ctx: RouteContext): Promise<unknown> | unknown;
}

// Query strings are text; this instance coerces them to the declared types.
const queryAjv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });

function compile(instance: { compile(schema: object): ValidateFunction }, schema?: JsonSchema) {
  return schema ? instance.compile(schema) : undefined;
}

export class Api {
  readonly routes: RouteDef[] = [];

  add(...defs: RouteDef[]): this {
    this.routes.push(...defs);
    return this;
  }

  router(prefix = '/api/v1'): Router {
    const router = new Router({ prefix });
    for (const def of this.routes) {
      const validateBody = compile(ajv, def.body);
      const validateQuery = compile(queryAjv, def.query);
      const checkScope: Koa.Middleware = async (koa, next) => {
        const principal = koa.state.principal as Principal | undefined;
        if (def.auth !== 'none') {
          if (!principal) throw errors.unauthorized(koa.state.authError);
          if (!hasScope(principal, def.auth)) {
            throw errors.forbidden(`This needs a key with scope "${def.auth}"; this key has "${principal.scope}"`);
          }
        }
        await next();
      };
      router[def.method](def.path, checkScope, ...(def.before ?? []), async (koa) => {
        const principal = koa.state.principal as Principal | undefined;
        const query = { ...koa.query } as Record<string, unknown>;
        if (validateQuery && !validateQuery(query)) {
          throw errors.validation('Invalid query parameters', formatErrors(validateQuery.errors, 'query'));
        }
        const body = (koa.request as { body?: unknown }).body;
        if (validateBody && !validateBody(body ?? {})) {
          throw errors.validation('Invalid request body', formatErrors(validateBody.errors, 'body'));
        }
        const result = await def.handler({ principal: principal!, params: koa.params, query, body: body ?? {}, koa });
        // A handler answers by returning the body; one that wrote the response itself returns nothing.
        if (result !== undefined) {
          koa.status = def.status ?? 200;
          koa.body = result;
        } else if (koa.body === undefined) {
          koa.status = 204;
        }
      });
    }
    return router;
  }
}
