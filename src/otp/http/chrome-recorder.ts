// Chrome DevTools Recorder JSON (a UserFlow of @puppeteer/replay) turned into test case steps. The
// mapping, and what has no OTP equivalent and is dropped, is documented in docs/recording.md.
import { parse, type Selector, type Step, StepType, stripSourceMap, type UserFlow } from '@puppeteer/replay';
import { errors, type FieldError } from '../../errors.js';
import {
  type Locator,
  type LocatorOrCandidates,
  MAX_TEST_CASE_STEPS,
  type TestCaseStep,
} from '../protocol/schemas/index.js';

/** The action of a test case step. */
type StepAction = TestCaseStep['otp'];

import { validateTestCaseSteps } from '../protocol/validators.js';

export interface ConvertedFlow {
  title: string;
  steps: TestCaseStep[];
  /** Source steps with no OTP equivalent, by type, with how many of each. */
  dropped: Record<string, number>;
}

/** Whether a body looks like a Chrome recording (its steps carry `type`, ours carry `otp`). */
export function isChromeRecording(body: { steps?: unknown }): boolean {
  return Array.isArray(body.steps) && body.steps.some((s) => s !== null && typeof s === 'object' && 'type' in s);
}

/** A recording as text may end with the `//# recorderSourceMap=` line Chrome's JSON export appends. */
export function parseChromeRecordingText(text: string): unknown {
  return JSON.parse(stripSourceMap(text));
}

const ARIA_WITH_ROLE = /^(.*)\[role="([^"]+)"\]$/;

/** One Chrome selector (one part of a piercing chain) as an OTP locator. */
function part(selector: string): Locator {
  if (selector.startsWith('aria/')) {
    const aria = selector.slice(5);
    const withRole = ARIA_WITH_ROLE.exec(aria);
    // An accessible name without a role: the nearest OTP strategy is the element's text.
    return withRole
      ? { by: 'role', value: withRole[2]!, name: withRole[1]!, exact: true }
      : { by: 'text', value: aria, exact: true };
  }
  if (selector.startsWith('xpath/')) return { by: 'xpath', value: selector.slice(6) };
  if (selector.startsWith('text/')) return { by: 'text', value: selector.slice(5) };
  // Playwright's CSS pierces open shadow roots, as Chrome's pierce/ does.
  if (selector.startsWith('pierce/')) return { by: 'css', value: selector.slice(7) };
  return { by: 'css', value: selector };
}

/** A selector, or a chain of them (each part inside the previous: shadow roots), as a locator. */
function locatorOf(selector: Selector, frame: string | undefined): Locator {
  const parts = typeof selector === 'string' ? [selector] : selector;
  let locator = part(parts[0]!);
  for (const next of parts.slice(1)) locator = { ...part(next), within: locator };
  return frame ? { ...locator, frame } : locator;
}

/** A step's selectors, in Chrome's order, as candidates (one locator stands alone). */
function candidates(selectors: Selector[], frame: string | undefined): LocatorOrCandidates {
  const list = selectors.map((s) => locatorOf(s, frame));
  return list.length === 1 ? list[0] : { candidates: list };
}

/** The frame selector of a step: Chrome gives child-frame indices; one level maps to an iframe. */
function frameOf(step: Step): string | undefined | false {
  const path = 'frame' in step ? step.frame : undefined;
  if (!path?.length) return undefined;
  return path.length === 1 ? `iframe >> nth=${path[0]}` : false;
}

const MODIFIER_KEYS = new Set([
  'Shift',
  'Control',
  'Alt',
  'Meta',
  'ShiftLeft',
  'ShiftRight',
  'ControlLeft',
  'ControlRight',
  'AltLeft',
  'AltRight',
  'MetaLeft',
  'MetaRight',
]);

type Convert<S extends Step> = (step: S, locator: () => LocatorOrCandidates) => StepAction | undefined;

/**
 * The OTP action of each Chrome step type that has one (undefined for a step of it that has none: a
 * modifier key pressed alone). The other types (setViewport, keyUp, close, emulateNetworkConditions,
 * waitForExpression, customStep) are dropped.
 */
const CONVERSIONS: { [T in StepType]?: Convert<Extract<Step, { type: T }>> } = {
  [StepType.Navigate]: (step) => ({ action: 'navigate', url: step.url }),
  [StepType.Click]: (step, loc) =>
    step.button === 'secondary' ? { action: 'rightClick', locator: loc() } : { action: 'click', locator: loc() },
  [StepType.DoubleClick]: (_step, loc) => ({ action: 'dblclick', locator: loc() }),
  [StepType.Change]: (step, loc) => ({ action: 'type', locator: loc(), text: step.value, clear: true }),
  [StepType.KeyDown]: (step) =>
    MODIFIER_KEYS.has(step.key) ? undefined : { action: 'press', key: step.key === ' ' ? 'Space' : step.key },
  [StepType.Hover]: (_step, loc) => ({ action: 'hover', locator: loc() }),
  [StepType.Scroll]: (step, loc) =>
    ({
      action: 'scroll',
      ...('selectors' in step && step.selectors?.length ? { locator: loc() } : {}),
      dx: Math.round(step.x ?? 0),
      dy: Math.round(step.y ?? 0),
    }) as StepAction,
  [StepType.WaitForElement]: (step, loc) => {
    const count = step.count;
    if (count === undefined)
      return { action: 'wait', locator: loc(), state: step.visible === false ? 'hidden' : 'visible' } as StepAction;
    const op = step.operator ?? '==';
    const [cmp, expected] = op === '==' ? ['equals', count] : op === '>=' ? ['gt', count - 1] : ['lt', count + 1];
    return { action: 'assert', kind: 'count', locator: loc(), op: cmp, expected: String(expected) } as StepAction;
  },
};

/** The OTP actions of one Chrome step: none when it has no equivalent. */
function actionsOf(step: Step): StepAction[] | undefined {
  const frame = frameOf(step);
  if (frame === false) return undefined; // nested frames have no OTP selector
  if ('target' in step && step.target && step.target !== 'main') return undefined; // popups, other tabs
  const convert = CONVERSIONS[step.type] as Convert<Step> | undefined;
  const action = convert?.(step, () => candidates((step as { selectors: Selector[] }).selectors, frame));
  return action && [action, ...navigationAsserts(step)];
}

/** A navigation Chrome saw happen becomes assertions on where it went. */
function navigationAsserts(step: Step): StepAction[] {
  const asserts: StepAction[] = [];
  for (const event of step.assertedEvents ?? []) {
    if (event.url) asserts.push({ action: 'assert', kind: 'url', op: 'equals', expected: event.url } as StepAction);
    if (event.title)
      asserts.push({ action: 'assert', kind: 'title', op: 'equals', expected: event.title } as StepAction);
  }
  return asserts;
}

/** Validates (with @puppeteer/replay's own parser) and converts a Chrome DevTools Recorder flow. */
export function convertChromeRecording(body: unknown): ConvertedFlow {
  let flow: UserFlow;
  try {
    flow = parse(body);
  } catch (err) {
    throw errors.validation(`Not a Chrome DevTools Recorder recording: ${(err as Error).message}`, [
      { field: 'body', message: (err as Error).message },
    ]);
  }
  const steps: TestCaseStep[] = [];
  const dropped: Record<string, number> = {};
  const problems: FieldError[] = [];
  flow.steps.forEach((step, i) => {
    const actions = actionsOf(step);
    if (!actions) {
      dropped[step.type] = (dropped[step.type] ?? 0) + 1;
      return;
    }
    for (const otp of actions) {
      const converted: TestCaseStep = { otp, ...(step.timeout ? { timeoutMs: step.timeout } : {}) };
      const check = validateTestCaseSteps([converted], `body.steps[${i}]`);
      if (check.ok) steps.push(converted);
      else
        problems.push(
          ...check.errors.map((e) => ({
            field: `body.steps[${i}]`,
            message: `${step.type} could not be converted: ${e.field} ${e.message}`,
          })),
        );
    }
  });
  if (problems.length)
    throw errors.validation('Some steps of the recording could not be converted to OTP steps', problems);
  if (steps.length > MAX_TEST_CASE_STEPS) {
    throw errors.validation(
      `The recording converts to ${steps.length} steps; a test case holds at most ${MAX_TEST_CASE_STEPS}`,
      [{ field: 'body.steps', message: `at most ${MAX_TEST_CASE_STEPS} steps after conversion` }],
    );
  }
  if (!steps.length)
    throw errors.validation('The recording has no step that converts to an OTP step', [
      {
        field: 'body.steps',
        message: `only ${Object.keys(dropped).join(', ')} steps, which OTP has no equivalent for`,
      },
    ]);
  return { title: flow.title, steps, dropped };
}
