// What an artifact resource adds to a resource definition (src/rest/resource/definition.ts): the
// fields every artifact record carries, the kind it is stored under, the fields that name other
// artifacts, links, coverage, unique fields and hooks for the few rules a schema cannot say.
// A group's definition file (bugs/bugs.ts, tests/cases.ts, ...) is one defineArtifact() call: it is
// the resource's schema; the generic ArtifactStore (store.ts) keeps it and resourceRoutes serves it.

import type { Knex } from 'knex';
import type { Principal } from '../auth/principal.js';
import type { ChangeEvents } from '../db/change-events.js';
import type { Data, Rec, ResourceDefinition } from '../rest/resource/definition.js';
import type { JsonSchema } from '../rest/route.js';
import { revision, timestamps } from '../rest/schemas.js';

/** Fields every artifact record has beyond its own (the common columns of the artifacts table). */
export const artifactSystemFields: Record<string, JsonSchema> = {
  projectId: { type: 'string', description: 'Project the record belongs to' },
  version: revision,
  createdBy: {
    type: ['string', 'null'],
    description: 'Id of the API key that created the record (null when the service did)',
  },
  ...timestamps,
};

export interface StoredArtifact {
  id: string;
  kind: string;
  tenant_id: string;
  project_id: string;
  version: number;
  data: Data;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface WriteContext {
  db: Knex.Transaction;
  principal: Principal;
  op: 'create' | 'update';
  /** The fields about to be stored; a hook may set server-side fields here. */
  next: Data;
  /** The stored record (update only). */
  prev?: StoredArtifact;
  settings: ArtifactSettings;
  /** Where the store reports its changes (webhooks): a subscription's write tells it subscriptions change. */
  events: ChangeEvents;
}

/** What the service's configuration says to the rules of artifacts. */
export interface ArtifactSettings {
  /** Webhook urls may name private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateWebhookTargets: boolean;
}

export interface ArtifactHooks {
  /** Inside the write transaction, after schema and reference checks: more checks, server-set fields. */
  prepare?(ctx: WriteContext): Promise<void> | void;
  /** Inside the delete transaction, before the row goes: refuse (throw) or tidy up. */
  beforeDelete?(ctx: { db: Knex.Transaction; principal: Principal; prev: StoredArtifact }): Promise<void>;
  /** Adds read-time fields to a page of records (one query per page, not per record). */
  decorate?(db: Knex, projectId: string, records: Rec[]): Promise<void>;
  /** Event types a change reports besides `<kind>.created|updated|deleted` (docs/webhooks.md); their data is the record. */
  events?(change: { op: 'created' | 'updated' | 'deleted'; record: Rec; prev?: StoredArtifact }): string[];
}

export interface ArtifactDefinition extends ResourceDefinition {
  /** Stored in artifacts.kind, e.g. `bug`, `test_case`. */
  kind: string;
  /** Fields that name other artifacts of the project, and the kinds each may name. */
  refs?: Record<string, string[]>;
  /** Links to and from other artifacts (GET/POST /:id/links); on unless false. */
  links?: boolean;
  /** GET /:id/coverage: the test cases that cover it and their latest results. */
  coverage?: boolean;
  /** Fields unique in the project (an index in the migration enforces each): a duplicate is 409. */
  unique?: string[];
  hooks?: ArtifactHooks;
  /** Changes are reported to webhooks (`<kind>.created|updated|deleted`); on unless false. */
  events?: boolean;
}

/** An artifact resource: its definition with the system fields every artifact has. */
export function defineArtifact(def: Omit<ArtifactDefinition, 'system'>): ArtifactDefinition {
  return { ...def, system: artifactSystemFields };
}
