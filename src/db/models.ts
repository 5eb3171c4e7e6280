// Thin Objection models for plain CRUD resources: camelCase in code and JSON, snake_case in tables.
// The engine's hot paths use knex directly.
import { Model, snakeCaseMappers } from 'objection';

export class BaseModel extends Model {
  static get columnNameMappers() {
    return snakeCaseMappers();
  }
}

export class TestCaseModel extends BaseModel {
  static tableName = 'test_cases';
  static jsonAttributes = ['steps'];
  id!: string;
  tenantId!: string;
  projectId!: string;
  title!: string;
  description?: string | null;
  steps!: Array<{ otp: { action: string; [k: string]: unknown }; label?: string; timeoutMs?: number; continueOnFail?: boolean; evidence?: string }>;
  version!: number;
  createdAt!: Date;
  updatedAt!: Date;
}

export class TestPlanModel extends BaseModel {
  static tableName = 'test_plans';
  static jsonAttributes = ['testCaseIds'];
  id!: string;
  tenantId!: string;
  projectId!: string;
  title!: string;
  description?: string | null;
  testCaseIds!: string[];
  version!: number;
  createdAt!: Date;
  updatedAt!: Date;
}
