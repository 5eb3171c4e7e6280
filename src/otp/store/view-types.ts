// The types of the run and session views: each the type of its registered schema (view-schemas.ts).
import type { FromSchema } from 'json-schema-to-ts';
import type { evidenceFile } from '../../assets/evidence/schema.js';
import type { ActionRefs } from '../protocol/schemas/actions.js';
import type { Capabilities } from '../protocol/schemas/messages.js';
import type { runSchema, runSummarySchema, sessionSchema } from './view-schemas.js';

/** FromSchema's options for the views: a step's action and a session's capabilities are the protocol's. */
type ViewRefs = {
  references: [...ActionRefs['references'], typeof evidenceFile, { $id: 'Capabilities' }];
  deserialize: [...ActionRefs['deserialize'], { pattern: { $ref: 'Capabilities' }; output: Capabilities }];
};

/** A run as GET /otp/runs/:id answers it: the type of its schema (view-schemas.ts). */
export type RunView = FromSchema<typeof runSchema, ViewRefs>;
/** A run without its steps, as lists and `run.finished` give it. */
export type RunSummary = FromSchema<typeof runSummarySchema, ViewRefs>;
/** One step of a run, with the outcome of its test case's last attempt. */
export type StepView = RunView['steps'][number];
/** The outcome of a step in an attempt before its case's last (runs with retries). */
export type StepAttemptView = NonNullable<RunView['earlierAttempts']>[number];
/** An executor session as GET /otp/sessions/:id answers it. */
export type SessionView = FromSchema<typeof sessionSchema, ViewRefs>;
