// Thin Objection models for plain CRUD tables: camelCase in code and JSON, snake_case in tables.
// Artifacts (test cases and plans among them) live in the `artifacts` table behind src/artifacts/store.ts,
// and the engine's hot paths use knex directly.
import { Model, snakeCaseMappers } from 'objection';

export class BaseModel extends Model {
  static get columnNameMappers() {
    return snakeCaseMappers();
  }
}
