// API keys of a project, in the api_keys table (through ApiKeyModel). The secret exists only in the
// create answer: the table keeps its SHA-256 (src/auth/keys.ts). Revoking keeps the row, stamped
// revokedAt, so a revoked key's id still reads and its requests are refused with 401.
import { raw } from 'objection';
import { ApiKeyModel } from '../auth/api-key-model.js';
import { type ApiKeyRecord, createKey, toApiKey } from '../auth/keys.js';
import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import { checkIfMatch, type IfMatch } from '../rest/conditional.js';
import { type Page, type PageQuery, paginate } from '../rest/pagination.js';
import type { ApiKeyCreate, ApiKeyUpdate } from './schema.js';

export class ApiKeyStore {
  constructor(private readonly db: Db) {}

  /** A new key of the caller's project, with its secret (to be shown this once). */
  async create(principal: Principal, input: ApiKeyCreate): Promise<ApiKeyRecord & { key: string }> {
    const { key, secret } = await createKey(this.db, principal, input);
    return { ...key, key: secret };
  }

  list(principal: Principal, page: PageQuery): Promise<Page<ApiKeyRecord>> {
    return paginate(ApiKeyModel.query(this.db).where('project_id', principal.projectId), page, toApiKey);
  }

  async get(principal: Principal, id: string): Promise<ApiKeyRecord> {
    const key = await ApiKeyModel.query(this.db).findOne({ id, project_id: principal.projectId });
    if (!key) throw errors.notFound('API key', id);
    return toApiKey(key);
  }

  async rename(principal: Principal, id: string, patch: ApiKeyUpdate, ifMatch: IfMatch): Promise<ApiKeyRecord> {
    return this.db.transaction(async (trx) => {
      const key = await ApiKeyModel.query(trx).findOne({ id, project_id: principal.projectId }).forUpdate();
      if (!key) throw errors.notFound('API key', id);
      checkIfMatch(ifMatch, key.version, `API key ${id}`);
      return toApiKey(await key.$query(trx).patchAndFetch({ name: patch.name, version: key.version + 1 }));
    });
  }

  /** Revoking an already revoked key changes nothing (and answers it as it is). */
  async revoke(principal: Principal, id: string, ifMatch: IfMatch): Promise<ApiKeyRecord> {
    const row = await this.db.transaction(async (trx) => {
      const key = await ApiKeyModel.query(trx).findOne({ id, project_id: principal.projectId }).forUpdate();
      if (!key) throw errors.notFound('API key', id);
      checkIfMatch(ifMatch, key.version, `API key ${id}`);
      if (key.revokedAt) return key;
      return key.$query(trx).patchAndFetch({ revokedAt: raw('now()') as unknown as Date, version: key.version + 1 });
    });
    return toApiKey(row);
  }
}
