// Frame validation. Every OTP schema is registered and compiled once, when this module is loaded
// (on the shared Ajv instances of src/validation/); a frame is checked by looking its type up in a
// Map and calling the compiled function (no per-frame compilation, no copy of the frame). The check
// costs at most what the frame's size does, however many problems it has (validation/bounded.ts).
import type { StepAction } from '../../../machines/types.js';
import { type BoundedValidator, boundedValidatorOf } from '../../validation/bounded.js';
import { type FieldError, quote, type ValidationResult } from '../../validation/field-errors.js';
import { unstorableText } from '../../validation/text.js';
import { cleanObservedText } from './observed-text.js';
import type {
  InboundMessage,
  InboundType,
  OutboundMessage,
  OutboundType,
  StepResultPayload,
  TestCaseStep,
} from './schemas/index.js';
import {
  INBOUND_TYPES,
  inboundMessageSchemas,
  MESSAGE_TYPES,
  OUTBOUND_TYPES,
  otpSchemas,
  outboundMessageSchemas,
} from './schemas/index.js';

export type { FieldError, InboundType, OutboundType, ValidationResult };

const compiled = new Map<string, BoundedValidator>();
for (const schema of otpSchemas) {
  const id = schema.$id as string;
  compiled.set(id, boundedValidatorOf(id));
}

function compiledFor(schemaId: string): BoundedValidator {
  const fn = compiled.get(schemaId);
  if (!fn) throw new Error(`unknown OTP schema id: ${schemaId}`);
  return fn;
}

const messageTypeSet: ReadonlySet<string> = new Set(MESSAGE_TYPES);

/**
 * A checker for one OTP schema id (`Locator`, `StepAction`, `HelloPayload`, ...), compiled at load.
 * `prefix` starts the field paths of its errors. Throws for an unknown id.
 */
export function validatorFor<T = unknown>(schemaId: string): (data: unknown, prefix?: string) => ValidationResult<T> {
  return compiledFor(schemaId) as BoundedValidator<T>;
}

export type FrameResult<M> = { ok: true; message: M } | { ok: false; errors: FieldError[] };
export type InboundResult = FrameResult<InboundMessage>;
export type OutboundResult = FrameResult<OutboundMessage>;

/** Why a frame has no validator in this direction: not an object, or no/unknown/wrong-way type. */
function typeProblem(frame: unknown, direction: readonly string[], sentBy: string, otherSide: string): FieldError[] {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
    return [{ field: '(root)', message: 'frame must be a JSON object' }];
  }
  const type = (frame as { type?: unknown }).type;
  const expected = `expected one of ${direction.join(', ')}`;
  if (type === undefined) return [{ field: 'type', message: `is required; ${expected}` }];
  if (typeof type !== 'string') return [{ field: 'type', message: `must be a string; ${expected}` }];
  const message = messageTypeSet.has(type)
    ? `"${type}" is sent by the ${otherSide}, not by the ${sentBy}; ${expected}`
    : `unknown type ${quote(type)}; ${expected}`;
  return [{ field: 'type', message }];
}

/**
 * The checker of the frames one side sends: an object whose `type` is one of `types`, valid against
 * that type's schema. On success `message` is the frame itself (not a copy).
 */
function frameChecker<M>(
  types: readonly string[],
  schemaOf: Readonly<Record<string, string>>,
  sentBy: string,
  otherSide: string,
  // Each cleaner takes the frame of its own type (checked just before it runs), hence `never` here.
  cleaners: Readonly<Record<string, (frame: never) => void>> = {},
): (frame: unknown, text?: string) => FrameResult<M> {
  const validators = new Map<string, BoundedValidator>(types.map((t) => [t, compiledFor(schemaOf[t]!)]));
  return (frame, text) => {
    if (frame !== null && typeof frame === 'object') {
      const type = (frame as { type?: unknown }).type as string;
      const fn = validators.get(type);
      if (fn) {
        const result = fn(frame, '', text?.length);
        if (!result.ok) return result;
        // Text PostgreSQL cannot store is refused here, where the frame enters, not by a failed write,
        // except in text observed on a page, which is cleaned instead (observed-text.ts). Such text can
        // only arrive as a \u escape (a raw NUL is invalid JSON, and decoded UTF-8 has no lone
        // surrogates), so a frame whose text has none needs neither.
        if (text !== undefined && !text.includes('\\u')) return { ok: true, message: frame as M };
        cleaners[type]?.(frame as never);
        const unstorable = unstorableText(frame);
        return unstorable ? { ok: false, errors: [unstorable] } : { ok: true, message: frame as M };
      }
    }
    return { ok: false, errors: typeProblem(frame, types, sentBy, otherSide) };
  };
}

/**
 * Check a parsed frame from the executor (the session's hot path). `text`, the JSON it was parsed
 * from, when given, spares walks over the frame (see bounded.ts and the text check below).
 */
export const validateInbound = frameChecker<InboundMessage>(
  INBOUND_TYPES,
  inboundMessageSchemas,
  'executor',
  'service',
  {
    'step.result': (frame: { payload: StepResultPayload }) => cleanObservedText(frame.payload),
  },
);

/** Check a frame the service is about to send (tests and docs; the hot path does not need it). */
export const validateOutbound = frameChecker<OutboundMessage>(
  OUTBOUND_TYPES,
  outboundMessageSchemas,
  'service',
  'executor',
);

const stepActionValidator = compiledFor('StepAction');
const testCaseStepsValidator = compiledFor('TestCaseSteps');

/** Check one step action (`{ action, ... }`); error fields start with `prefix` (e.g. `steps[0].otp`). */
export function validateStepAction(action: unknown, prefix = ''): ValidationResult<StepAction> {
  return stepActionValidator(action, prefix) as ValidationResult<StepAction>;
}

/** Check the steps of a test case (REST body member `steps`); error fields look like `steps[2].otp.locator.by`. */
export function validateTestCaseSteps(steps: unknown, prefix = 'steps'): ValidationResult<TestCaseStep[]> {
  return testCaseStepsValidator(steps, prefix) as ValidationResult<TestCaseStep[]>;
}
