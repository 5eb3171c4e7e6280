// Compile-time checks that the payload types the machines use (machines/types.ts, which cannot import
// src/) agree with the types derived from the protocol schemas. A drift on either side fails tsc.
//
// Capabilities and HelloPayload must be the same type (each assignable to the other, and the same
// members: assignability alone would let one side gain an optional member). For step.result and step.exec the machines'
// types are deliberately looser in a few members they pass through without reading (a step action's
// parameters, the locators of a report, an evidence mode as a string; a report's evidence.note is
// the service's own): there, both name the same members with the same ones required, and everything
// the schema accepts is a valid machine value.
import type * as Machine from '../../../../machines/types.js';
import type { Assert, Assignable, Equivalent, SameMembers } from '../../../validation/type-checks.js';
import type { ProtocolStepAction } from './actions.js';
import type { Capabilities, HelloPayload, StepExecPayload, StepResultPayload } from './messages.js';

type StepError = NonNullable<StepResultPayload['error']>;
type StepEvidence = NonNullable<StepResultPayload['evidence']>;

export type MachineTypesAgreeWithSchemas = [
  Assert<Equivalent<Capabilities, Machine.Capabilities>>,
  Assert<SameMembers<Capabilities, Machine.Capabilities>>,
  Assert<Equivalent<HelloPayload, Machine.HelloPayload>>,
  Assert<SameMembers<HelloPayload, Machine.HelloPayload>>,
  Assert<SameMembers<StepResultPayload, Machine.StepReport>>,
  Assert<Assignable<StepResultPayload, Machine.StepReport>>,
  Assert<SameMembers<StepError, Machine.StepError>>,
  Assert<Equivalent<Exclude<keyof NonNullable<Machine.StepReport['evidence']>, 'note'>, keyof StepEvidence>>,
  Assert<SameMembers<StepExecPayload, Machine.StepExecPayload>>,
  Assert<Assignable<StepExecPayload, Machine.StepExecPayload>>,
  Assert<Assignable<ProtocolStepAction, Machine.StepAction>>,
  Assert<Equivalent<StepResultPayload['status'], Machine.StepStatus>>,
];
