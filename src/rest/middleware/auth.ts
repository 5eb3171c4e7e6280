import type Koa from 'koa';
import type { Principal } from '../../auth/principal.js';

export type Authenticate = (secret: string) => Principal | null | Promise<Principal | null>;

/**
 * Resolves `Authorization: Bearer <API key or access token>` into ctx.state.principal (through
 * src/auth/principals.ts); routes decide what they need.
 */
export function authMiddleware(authenticate: Authenticate): Koa.Middleware {
  const settle = (ctx: Koa.Context, principal: Principal | null, malformed: boolean) => {
    if (principal) ctx.state.principal = principal;
    else
      ctx.state.authError = malformed
        ? 'Authorization must be "Bearer <API key or access token>"'
        : 'The API key or access token is unknown, expired or revoked';
  };
  return (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) return next();
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const found = match ? authenticate(match[1]!) : null;
    // A key held in memory is settled in this tick; only a lookup waits.
    if (!(found instanceof Promise)) {
      settle(ctx, found, !match);
      return next();
    }
    return found.then((principal) => {
      settle(ctx, principal, !match);
      return next();
    });
  };
}
