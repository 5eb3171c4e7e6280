// The words of OTP steps (docs/protocol.md, "Step actions"): the action names, the kinds and operators
// of an assert, and the values other parameters take. The schemas of actions.ts are built from them;
// the console's sentences (../sentences.ts) and the reference executor walk them.

export const ACTION_NAMES = [
  'navigate',
  'click',
  'dblclick',
  'rightClick',
  'type',
  'press',
  'select',
  'check',
  'uncheck',
  'hover',
  'scroll',
  'upload',
  'wait',
  'screenshot',
  'assert',
  'eval',
] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

export const ASSERT_KINDS = [
  'visible',
  'hidden',
  'enabled',
  'disabled',
  'checked',
  'text',
  'value',
  'count',
  'url',
  'title',
  'attribute',
] as const;
export type AssertKind = (typeof ASSERT_KINDS)[number];

/** Kinds that compare an observed value with `expected`. */
export const VALUE_ASSERT_KINDS = ['text', 'value', 'count', 'url', 'title', 'attribute'] as const;
/** Kinds that check a state of the element and take neither op nor expected. */
export const STATE_ASSERT_KINDS = ['visible', 'hidden', 'enabled', 'disabled', 'checked'] as const;
/** Kinds about the page rather than an element: no locator. */
export const PAGE_ASSERT_KINDS = ['url', 'title'] as const;
/** Kinds about an element: locator required. */
export const ELEMENT_ASSERT_KINDS = ASSERT_KINDS.filter((k) => k !== 'url' && k !== 'title');

export const ASSERT_OPS = ['equals', 'contains', 'matches', 'gt', 'lt'] as const;
export type AssertOp = (typeof ASSERT_OPS)[number];

export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle', 'commit'] as const;
export const KEY_MODIFIERS = ['Alt', 'Control', 'Meta', 'Shift'] as const;
export const SELECT_BY = ['value', 'label', 'index'] as const;
export const WAIT_STATES = ['visible', 'hidden', 'attached', 'detached'] as const;
export const EVIDENCE_MODES = ['always', 'onFail', 'never'] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];
