export type Scope = 'read' | 'write' | 'admin';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

/**
 * Who is calling: one key, bound to one tenant and one project. An OAuth access token stands for the
 * key that vouched for it (the key given on the consent page, or the admin key that registered a
 * client-credentials client): `keyId` is that key, `scope` at most the key's, and `tokenId`/`clientId`
 * say a token, not the key itself, was presented.
 */
export interface Principal {
  keyId: string;
  tenantId: string;
  projectId: string;
  scope: Scope;
  /** The tenant's tier (src/tiers.ts); absent means free. */
  tier?: string;
  /** An archived project is read-only: its keys read, writes are refused (409). */
  projectStatus?: 'active' | 'archived';
  /** The `jti` of the access token presented (absent for an API key). */
  tokenId?: string;
  /** The OAuth client the token was issued to. */
  clientId?: string;
}

const rank: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

/** admin includes write, write includes read. */
export function hasScope(principal: Principal, needed: Scope): boolean {
  return rank[principal.scope] >= rank[needed];
}

/** The highest of the scopes named (a token's `scope` claim holds several); null when none is known. */
export function highestScope(names: Iterable<string>): Scope | null {
  let best: Scope | null = null;
  for (const name of names) {
    if ((SCOPES as readonly string[]).includes(name) && (!best || rank[name as Scope] > rank[best]))
      best = name as Scope;
  }
  return best;
}

/** The lower of two scopes: a token never carries more than the key behind it. */
export function lowerScope(a: Scope, b: Scope): Scope {
  return rank[a] <= rank[b] ? a : b;
}
