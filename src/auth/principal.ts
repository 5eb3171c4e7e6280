export type Scope = 'read' | 'write' | 'admin';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

/** Who is calling: one key, bound to one tenant and one project. */
export interface Principal {
  keyId: string;
  tenantId: string;
  projectId: string;
  scope: Scope;
  /** The tenant's tier (src/tiers.ts); absent means free. */
  tier?: string;
  /** An archived project is read-only: its keys read, writes are refused (409). */
  projectStatus?: 'active' | 'archived';
}

const rank: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

/** admin includes write, write includes read. */
export function hasScope(principal: Principal, needed: Scope): boolean {
  return rank[principal.scope] >= rank[needed];
}
