// oidc-provider's storage on knex: every model (Client, Grant, Session, Interaction,
// AuthorizationCode, RefreshToken, ...) is a row of oauth_models keyed by model and id, its payload as
// JSON. Nothing is kept in memory, so any process serves any step of a flow.
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Db } from '../db/connect.js';

export function knexAdapter(db: Db): new (name: string) => Adapter {
  return class KnexAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      };
      await db('oauth_models').insert(row).onConflict(['model', 'id']).merge();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return this.one(db('oauth_models').where({ model: this.model, id }));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.one(db('oauth_models').where({ model: this.model, uid }));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.one(db('oauth_models').where({ model: this.model, user_code: userCode }));
    }

    async consume(id: string): Promise<void> {
      await db('oauth_models').where({ model: this.model, id }).update({ consumed_at: db.fn.now() });
    }

    async destroy(id: string): Promise<void> {
      await db('oauth_models').where({ model: this.model, id }).delete();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db('oauth_models').where({ model: this.model, grant_id: grantId }).delete();
    }

    private async one(query: ReturnType<Db>): Promise<AdapterPayload | undefined> {
      const row = await query
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()))
        .first('payload', 'consumed_at');
      if (!row) return undefined;
      // A consumed code or refresh token is still found, marked, so the provider can detect its reuse.
      return { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) };
    }
  };
}
