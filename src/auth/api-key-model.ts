// Thin Objection models for plain CRUD tables: camelCase in code and JSON, snake_case in the table.
// Artifacts (test cases and plans among them) live in the `artifacts` table behind
// src/artifacts/store.ts, and the engine's hot paths (authentication included) use knex directly.
import { Model, snakeCaseMappers } from 'objection';
import type { Scope } from '../auth/principal.js';

export class BaseModel extends Model {
  static get columnNameMappers() {
    return snakeCaseMappers();
  }
}

export class ApiKeyModel extends BaseModel {
  static tableName = 'api_keys';
  id!: string;
  tenantId!: string;
  projectId!: string;
  name!: string;
  scope!: Scope;
  /** SHA-256 of the secret; never leaves the service. */
  keyHash!: string;
  /** The first characters of the secret, so people can tell their keys apart. */
  keyPrefix!: string;
  createdAt!: Date;
  revokedAt!: Date | null;
  version!: number;
}
