import type Koa from 'koa';
import type { Principal } from '../../auth/principal.js';

export type Authenticate = (secret: string) => Promise<Principal | null>;

/** Resolves `Authorization: Bearer <key>` into ctx.state.principal; routes decide what they need. */
export function authMiddleware(authenticate: Authenticate): Koa.Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (header) {
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      const principal = match ? await authenticate(match[1]) : null;
      if (principal) ctx.state.principal = principal;
      else ctx.state.authError = match ? 'The API key is unknown or revoked' : 'Authorization must be "Bearer <API key>"';
    }
    await next();
  };
}
