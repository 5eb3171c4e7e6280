// One declarative definition per resource: its path, id prefix, fields (JSON Schema), required and
// immutable fields, fields the service sets, filters and scopes. Everything else about the resource
// comes from it: its schemas (schemas.ts), its five REST routes (routes.ts), and the merge-patch and
// default rules below, which a store (store.ts) applies to the fields it keeps.
import type { Scope } from '../../auth/principal.js';
import type { JsonSchema } from '../route.js';

/**
 * The fields of a record, as a generic CRUD body carries them and a store keeps them. Their shape is
 * known only at run time, from the definition: the schemas built from it check every body first.
 */
export type Data = Record<string, unknown>;

/** A record as answered: its id, its revision and its fields. */
export interface Rec {
  id: string;
  version: number;
  [field: string]: unknown;
}

export interface ResourceDefinition {
  /** Path under /api/v1 and OpenAPI tag, e.g. `bugs`, `tests/cases`, `platform/projects`. */
  path: string;
  /** PascalCase name of the record schema (`Bug`); the others are `BugCreate`, `BugUpdate`, `BugPage`. */
  schemaName: string;
  /** PascalCase plural for operation names (`listBugs`). */
  pluralName: string;
  /** For messages: `bug`, `test case`. */
  label: string;
  idPrefix: string;
  description: string;
  /** Fields a client writes. `default` applies on create; `writeOnly` fields are never answered. */
  fields: Record<string, JsonSchema>;
  /** Fields a create must give. */
  required: string[];
  /** Fields set on create and never changed afterwards. */
  immutable?: string[];
  /** Fields the service sets (answered, never written by clients). */
  computed?: Record<string, JsonSchema>;
  /** Fields the list can filter on (equality; arrays: contains all; enums and strings: any of). */
  filters: string[];
  /** Who may read and who may write; read/write unless said. */
  scopes?: { read: Scope; write: Scope };
  /**
   * Fields every record carries beyond its id and fields, set by its store (tenantId or projectId,
   * version, timestamps). Artifacts get theirs from defineArtifact (src/artifacts/kind.ts).
   */
  system: Record<string, JsonSchema>;
}

/** The create input with each field's default filled in. */
export function withDefaults(def: ResourceDefinition, input: Data): Data {
  const out: Data = { ...input };
  for (const [field, schema] of Object.entries(def.fields)) {
    if (out[field] === undefined && schema.default !== undefined) out[field] = structuredClone(schema.default);
  }
  return out;
}

/** A stored record's fields with a merge patch applied: null removes a field (or resets it to its default). */
export function applyPatch(def: ResourceDefinition, stored: Data, patch: Data): Data {
  const out: Data = { ...stored };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      const fallback = def.fields[field]?.default;
      if (fallback === undefined) delete out[field];
      else out[field] = structuredClone(fallback);
    } else {
      out[field] = value;
    }
  }
  return out;
}

/** The fields of stored data that a client may see (no writeOnly ones). */
export function visibleFields(def: ResourceDefinition, data: Data): Data {
  const out: Data = {};
  for (const [field, value] of Object.entries(data)) {
    if (def.fields[field]?.writeOnly) continue;
    if (field in def.fields || (def.computed && field in def.computed)) out[field] = value;
  }
  return out;
}
