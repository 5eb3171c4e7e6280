// OTP step actions and the REST form of a test-case step (docs/protocol.md), built from the words of
// step-vocabulary.ts. StepAction is a oneOf
// discriminated on `action`: a validator that knows the discriminator checks only the branch the
// action names, so an error in a click step is reported as a click error, not as 16 branch errors.
//
// String parameters may hold {{name}} variables (filled from run.start vars, or {{secret_N}} in
// recordings), so url, text, value, key, expected and script carry no pattern or format.
//
// The TypeScript types (ActionStepOf, ProtocolStepAction, TestCaseStep) are derived from these
// schemas with json-schema-to-ts; conditional rules (if/then, dependentRequired) stay in the schemas.
import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema, LocatorRefs } from './locator.js';
import {
  ACTION_NAMES,
  type ActionName,
  ASSERT_KINDS,
  ASSERT_OPS,
  ELEMENT_ASSERT_KINDS,
  EVIDENCE_MODES,
  KEY_MODIFIERS,
  PAGE_ASSERT_KINDS,
  SELECT_BY,
  STATE_ASSERT_KINDS,
  VALUE_ASSERT_KINDS,
  WAIT_STATES,
  WAIT_UNTIL,
} from './step-vocabulary.js';

const locatorRef = (description: string) => ({ $ref: 'LocatorOrCandidates', description }) as const;
const TARGET = 'Element to act on.';

/** One StepAction branch: `action` is the constant tag, every other member is a parameter. */
function actionSchema<
  const N extends ActionName,
  const P extends Record<string, JsonSchema>,
  const R extends readonly string[],
  // biome-ignore lint/complexity/noBannedTypes: the empty default adds no member to the action's schema
  const X extends JsonSchema = {},
>(name: N, id: string, description: string, properties: P, required: R, extra: X = {} as X) {
  return {
    $id: id,
    title: id,
    description,
    type: 'object',
    properties: {
      action: { description: 'Action name.', const: name },
      ...properties,
    },
    required: ['action', ...required],
    additionalProperties: false,
    ...extra,
  } as const;
}

export const NavigateStepSchema = actionSchema(
  'navigate',
  'NavigateStep',
  'Open a URL in the current page.',
  {
    url: {
      description: 'Address to open; may contain {{name}} variables such as {{base_url}}/login.',
      type: 'string',
      minLength: 1,
    },
    waitUntil: { description: 'Page event that ends the navigation (default load).', enum: [...WAIT_UNTIL] },
  },
  ['url'],
);

export const ClickStepSchema = actionSchema(
  'click',
  'ClickStep',
  'Click an element.',
  {
    locator: locatorRef(TARGET),
    modifiers: {
      description: 'Keys held down during the click.',
      type: 'array',
      uniqueItems: true,
      items: { description: 'Modifier key.', enum: [...KEY_MODIFIERS] },
    },
  },
  ['locator'],
);

export const DblclickStepSchema = actionSchema(
  'dblclick',
  'DblclickStep',
  'Double-click an element.',
  { locator: locatorRef(TARGET) },
  ['locator'],
);

export const RightClickStepSchema = actionSchema(
  'rightClick',
  'RightClickStep',
  'Right-click (context click) an element.',
  { locator: locatorRef(TARGET) },
  ['locator'],
);

export const TypeStepSchema = actionSchema(
  'type',
  'TypeStep',
  'Type text into an element.',
  {
    locator: locatorRef('Field to type into.'),
    text: { description: 'Text to type; may contain {{name}} variables.', type: 'string' },
    delayMs: { description: 'Pause between key strokes, in milliseconds.', type: 'integer', minimum: 0 },
    clear: { description: 'Clear the field before typing.', type: 'boolean' },
  },
  ['locator', 'text'],
);

export const PressStepSchema = actionSchema(
  'press',
  'PressStep',
  'Press a key or key combination (for example Enter, Control+A).',
  {
    key: { description: 'Key or combination to press.', type: 'string', minLength: 1 },
    locator: locatorRef('Element to focus first; without it the key goes to the focused element.'),
  },
  ['key'],
);

export const SelectStepSchema = actionSchema(
  'select',
  'SelectStep',
  'Choose an option of a select element.',
  {
    locator: locatorRef('The select element.'),
    by: { description: 'How value names the option.', enum: [...SELECT_BY] },
    value: {
      description: 'Option value, option label, or zero-based option index (by=index, as a number or a string).',
      type: ['string', 'integer'],
      minimum: 0,
    },
  },
  ['locator', 'by', 'value'],
);

export const CheckStepSchema = actionSchema(
  'check',
  'CheckStep',
  'Check a checkbox or radio button.',
  { locator: locatorRef(TARGET) },
  ['locator'],
);

export const UncheckStepSchema = actionSchema(
  'uncheck',
  'UncheckStep',
  'Uncheck a checkbox.',
  { locator: locatorRef(TARGET) },
  ['locator'],
);

export const HoverStepSchema = actionSchema(
  'hover',
  'HoverStep',
  'Move the pointer over an element.',
  { locator: locatorRef(TARGET) },
  ['locator'],
);

export const ScrollStepSchema = actionSchema(
  'scroll',
  'ScrollStep',
  'Scroll the page or an element by an offset, or scroll an element into view.',
  {
    locator: locatorRef('Element to scroll (or to bring into view); without it the page scrolls.'),
    dx: { description: 'Horizontal offset in pixels.', type: 'integer' },
    dy: { description: 'Vertical offset in pixels.', type: 'integer' },
    into: { description: 'Scroll the located element into view (needs locator).', type: 'boolean' },
  },
  [],
  {
    if: { properties: { into: { const: true } }, required: ['into'] },
    then: { required: ['locator'] },
  },
);

export const UploadStepSchema = actionSchema(
  'upload',
  'UploadStep',
  'Set a file input to a stored asset.',
  {
    locator: locatorRef('The file input.'),
    assetId: { description: 'Asset to upload (prefix ast_).', type: 'string', pattern: '^ast_[A-Za-z0-9_-]{1,64}$' },
  },
  ['locator', 'assetId'],
);

/**
 * wait has three forms: { ms }, { locator, state? }, { networkidle: true }. Exactly one of ms,
 * locator, networkidle; the validator's error formatter turns a failed oneOf of bare `required`
 * branches into one message ("must have exactly one of: ms, locator, networkidle").
 */
export const WaitStepSchema = actionSchema(
  'wait',
  'WaitStep',
  'Wait for a time ({ ms }), for an element to reach a state ({ locator, state }), or for the network to go idle ({ networkidle: true }). Exactly one form.',
  {
    ms: { description: 'Milliseconds to wait.', type: 'integer', minimum: 0 },
    locator: locatorRef('Element to wait for.'),
    state: { description: 'State to wait for (default visible); only with locator.', enum: [...WAIT_STATES] },
    networkidle: { description: 'Wait until the network is idle.', const: true },
  },
  [],
  {
    oneOf: [{ required: ['ms'] }, { required: ['locator'] }, { required: ['networkidle'] }],
    dependentRequired: { state: ['locator'] },
  },
);

export const ScreenshotStepSchema = actionSchema(
  'screenshot',
  'ScreenshotStep',
  'Take a screenshot, stored as evidence.',
  { fullPage: { description: 'Capture the whole scrollable page, not just the viewport.', type: 'boolean' } },
  [],
);

/**
 * assert. Rules beyond the member types:
 * - locator is required, except for kinds url and title, which are about the page and take none;
 * - expected is required for the value kinds (text, value, count, url, title, attribute), and the
 *   state kinds (visible, hidden, enabled, disabled, checked) take neither op nor expected;
 * - attribute is required for kind attribute and not allowed for the others;
 * - op gt and lt compare numbers: only for kind count; count takes equals, gt or lt.
 */
export const AssertStepSchema = actionSchema(
  'assert',
  'AssertStep',
  'Check a condition on an element or on the page; fails the step with E_ASSERT_FAILED when it does not hold.',
  {
    kind: { description: 'What is checked.', enum: [...ASSERT_KINDS] },
    locator: locatorRef('Element checked; not used for kinds url and title.'),
    op: {
      description: 'Comparison of the observed value with expected (default equals); gt and lt only for count.',
      enum: [...ASSERT_OPS],
    },
    expected: {
      description: 'Expected value (a regular expression for op matches); may contain {{name}} variables.',
      type: 'string',
    },
    attribute: { description: 'Attribute name, for kind attribute.', type: 'string', minLength: 1 },
  },
  ['kind'],
  {
    // Conditions name the kinds they apply to (never else), so an unknown kind is reported once,
    // by the enum, and does not drag in rules meant for other kinds.
    allOf: [
      {
        if: { properties: { kind: { enum: [...PAGE_ASSERT_KINDS] } }, required: ['kind'] },
        then: { properties: { locator: false } },
      },
      {
        if: { properties: { kind: { enum: [...ELEMENT_ASSERT_KINDS] } }, required: ['kind'] },
        then: { required: ['locator'] },
      },
      {
        if: { properties: { kind: { enum: [...VALUE_ASSERT_KINDS] } }, required: ['kind'] },
        then: { required: ['expected'] },
      },
      {
        if: { properties: { kind: { enum: [...STATE_ASSERT_KINDS] } }, required: ['kind'] },
        then: { properties: { op: false, expected: false } },
      },
      {
        if: { properties: { kind: { const: 'attribute' } }, required: ['kind'] },
        then: { required: ['attribute'] },
      },
      {
        if: { properties: { kind: { enum: ASSERT_KINDS.filter((k) => k !== 'attribute') } }, required: ['kind'] },
        then: { properties: { attribute: false } },
      },
      {
        if: { properties: { op: { enum: ['gt', 'lt'] } }, required: ['op'] },
        then: { properties: { kind: { const: 'count' } } },
      },
      {
        if: { properties: { kind: { const: 'count' } }, required: ['kind'] },
        then: { properties: { op: { enum: ['equals', 'gt', 'lt'] } } },
      },
    ],
  },
);

export const EvalStepSchema = actionSchema(
  'eval',
  'EvalStep',
  'Run a script in the page (only for executors that declared capability eval).',
  {
    script: {
      description: 'JavaScript source to evaluate; may contain {{name}} variables.',
      type: 'string',
      minLength: 1,
    },
  },
  ['script'],
);

/** Branches of StepAction, in ACTION_NAMES order. */
export const actionSchemas = [
  NavigateStepSchema,
  ClickStepSchema,
  DblclickStepSchema,
  RightClickStepSchema,
  TypeStepSchema,
  PressStepSchema,
  SelectStepSchema,
  CheckStepSchema,
  UncheckStepSchema,
  HoverStepSchema,
  ScrollStepSchema,
  UploadStepSchema,
  WaitStepSchema,
  ScreenshotStepSchema,
  AssertStepSchema,
  EvalStepSchema,
] as const satisfies readonly JsonSchema[];

type ActionBranches = typeof actionSchemas;

/**
 * FromSchema options for schemas that `$ref` a step action: a locator reference becomes the
 * hand-written Locator types (see locator.ts), a StepAction reference the union of the branches
 * (StepActionSchema lists its branches as `$ref`s built at load, which FromSchema cannot read).
 */
export type ActionRefs = {
  references: [...LocatorRefs['references'], { $id: 'StepAction' }];
  deserialize: [...LocatorRefs['deserialize'], { pattern: { $ref: 'StepAction' }; output: ProtocolStepAction }];
};

/** One step action as the schema accepts it, per action name. */
export type ActionStepOf = {
  [K in keyof ActionBranches & `${number}` as ActionBranches[K]['properties']['action']['const']]: FromSchema<
    ActionBranches[K],
    LocatorRefs
  >;
};

/**
 * A step action as the protocol defines it (a union discriminated on `action`). The machines use
 * their own looser StepAction (machines/types.ts: they pass parameters through without reading them);
 * agreement.ts checks that every ProtocolStepAction is one.
 */
export type ProtocolStepAction = ActionStepOf[ActionName];

export const StepActionSchema = {
  $id: 'StepAction',
  title: 'StepAction',
  description: `One step action (step.exec step, test-case steps[].otp). The member action names it: ${ACTION_NAMES.join(', ')}.`,
  type: 'object',
  discriminator: { propertyName: 'action' },
  required: ['action'],
  oneOf: actionSchemas.map((s) => ({ $ref: s.$id as string })),
} as const satisfies JsonSchema;

export const TestCaseStepSchema = {
  $id: 'TestCaseStep',
  title: 'TestCaseStep',
  description: 'One step of a test case: the action (otp) and the fields that become its step.exec.',
  type: 'object',
  properties: {
    otp: { $ref: 'StepAction', description: 'The action to perform.' },
    label: { description: 'Human-readable step label.', type: 'string', maxLength: 200 },
    timeoutMs: {
      description: 'Time allowed for the step in milliseconds (default 30000).',
      type: 'integer',
      minimum: 1,
      maximum: 600000,
    },
    continueOnFail: {
      description: 'Go on with the next steps of the test case when this one fails (default false).',
      type: 'boolean',
    },
    evidence: { description: 'When a screenshot is captured as evidence (default onFail).', enum: [...EVIDENCE_MODES] },
  },
  required: ['otp'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/** The REST form of a test-case step: { otp, label?, timeoutMs?, continueOnFail?, evidence? }. */
export type TestCaseStep = FromSchema<typeof TestCaseStepSchema, ActionRefs>;

/** Most steps one test case may hold: a run of more than 500 steps is refused (docs/protocol.md, limits). */
export const MAX_TEST_CASE_STEPS = 500;

export const TestCaseStepsSchema = {
  $id: 'TestCaseSteps',
  title: 'TestCaseSteps',
  description: `The steps of a test case, in order (at most ${MAX_TEST_CASE_STEPS}).`,
  type: 'array',
  maxItems: MAX_TEST_CASE_STEPS,
  items: { $ref: 'TestCaseStep' },
} as const satisfies JsonSchema;

export const stepSchemas: readonly JsonSchema[] = [
  ...actionSchemas,
  StepActionSchema,
  TestCaseStepSchema,
  TestCaseStepsSchema,
];
