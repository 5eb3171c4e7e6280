// The Objection model of api_keys, the one table plain enough for a model: camelCase in code and
// JSON, snake_case in the table. Every other table is read and written with knex by the room that
// owns it (docs/architecture.md); so are the keys on the authentication hot path.
import { Model, snakeCaseMappers } from 'objection';
import type { Scope } from './principal.js';

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
