// The assert step (spec 2.7): 11 kinds × the ops equals, contains, matches, gt, lt. Asserts are
// "web-first": the observation is retried until it holds or the step's time runs out, and the last
// observed value is reported as `actual` on every assert, passed or failed.
import type { Page } from 'playwright-core';
import type { ActionStepOf } from '../otp/protocol/schemas/actions.js';
import type { Locator, TriedLocator } from '../otp/protocol/schemas/locator.js';
import {
  holds,
  NEEDS_ELEMENT,
  normaliseSpace,
  ASSERT_POLL_MS as POLL_MS,
  STATE_WORD,
} from '../otp/protocol/step-rules.js';
import type { Deadline } from './deadline.js';
import { counted, currentLocator, describe, type Resolved, singleLocator } from './locators.js';
import { isTimeout, StepError } from './step-error.js';

export { holds };

type AssertStep = ActionStepOf['assert'];

interface Observation {
  actual: string;
  resolved?: Resolved;
  /** The element needed was not there. */
  missing?: boolean;
}

async function observe(page: Page, step: AssertStep, deadline: Deadline): Promise<Observation> {
  if (step.kind === 'url') return { actual: page.url() };
  if (step.kind === 'title') return { actual: await page.title() };
  // A single locator is read at once, as a bare script would (the getters wait for the element);
  // candidates are looked at first, to pick the one that matches.
  const single = singleLocator(page, step.locator!);
  const resolved = single ?? (await currentLocator(page, step.locator!));
  if (step.kind === 'count') return { actual: String(await resolved.all.count()), resolved };
  if (step.kind === 'visible' || step.kind === 'hidden')
    return { actual: (await resolved.target.isVisible()) ? 'visible' : 'hidden', resolved };
  if (!resolved.matched) return { actual: '', resolved, missing: true };
  try {
    return await read(step, resolved, deadline.pw());
  } catch (err) {
    if (!single || !isTimeout(err)) throw err;
    const look = await counted(single);
    if (look.found) throw err;
    return { actual: '', resolved: { ...single, tried: look.tried, matched: false }, missing: true };
  }
}

async function read(step: AssertStep, resolved: Resolved, timeout: number): Promise<Observation> {
  switch (step.kind) {
    case 'enabled':
    case 'disabled':
      return { actual: (await resolved.target.isEnabled({ timeout })) ? 'enabled' : 'disabled', resolved };
    case 'checked':
      return { actual: (await resolved.target.isChecked({ timeout })) ? 'checked' : 'unchecked', resolved };
    case 'text':
      return { actual: normaliseSpace(await resolved.target.innerText({ timeout })), resolved };
    case 'value':
      return { actual: await resolved.target.inputValue({ timeout }), resolved };
    case 'attribute':
      return { actual: (await resolved.target.getAttribute(step.attribute!, { timeout })) ?? '', resolved };
  }
  throw new StepError('E_INTERNAL', `unknown assert kind ${step.kind}`);
}

function expectation(step: AssertStep): string {
  const subject =
    step.kind === 'url' || step.kind === 'title'
      ? `page ${step.kind}`
      : `${step.kind}${step.attribute ? ` "${step.attribute}"` : ''} of ${describeSpec(step.locator!)}`;
  if (step.kind in STATE_WORD) return `${subject.replace(/^\w+ of /, '')} to be ${step.kind}`;
  return `${subject} ${step.op ?? 'equals'} "${step.expected ?? ''}"`;
}

function describeSpec(spec: NonNullable<AssertStep['locator']>): string {
  return 'candidates' in spec ? spec.candidates.map(describe).join(' | ') : describe(spec);
}

function failed(step: AssertStep, seen: Observation): StepError {
  return new StepError('E_ASSERT_FAILED', `expected ${expectation(step)}, got "${seen.actual}"`, {
    actual: seen.actual,
    usedLocator: seen.resolved?.used,
    triedLocators: seen.resolved?.tried,
  });
}

export interface AssertResult {
  actual: string;
  usedLocator?: Locator;
  triedLocators?: TriedLocator[];
}

/** One look at the asserted value; a time-out during a later look fails with the last value seen. */
async function look(page: Page, step: AssertStep, deadline: Deadline, last: Observation | undefined) {
  try {
    return await observe(page, step, deadline);
  } catch (err) {
    // The step's time ran out during a later look (on a busy machine a read can take what was
    // left): the assert did not hold by then, and `actual` is the last value seen.
    if (last && !last.missing && isTimeout(err)) throw failed(step, last);
    throw err;
  }
}

/** The step's time is up with the assert not holding: the element was never found, or it was wrong. */
function outOfTime(step: AssertStep, seen: Observation): StepError {
  if (seen.missing && NEEDS_ELEMENT.has(step.kind)) {
    return new StepError('E_LOCATOR_NOT_FOUND', `no element matched ${describeSpec(step.locator!)}`, {
      actual: '',
      triedLocators: seen.resolved?.tried,
    });
  }
  return failed(step, seen);
}

export async function performAssert(page: Page, step: AssertStep, deadline: Deadline): Promise<AssertResult> {
  const op = step.op ?? 'equals';
  let last: Observation | undefined;
  for (let attempt = 0; ; attempt++) {
    const seen = await look(page, step, deadline, last);
    last = seen;
    const verdict = seen.missing ? false : holds(step.kind, op, seen.actual, step.expected);
    if (typeof verdict === 'string')
      throw new StepError('E_ASSERT_FAILED', verdict, { actual: seen.actual, usedLocator: seen.resolved?.used });
    if (verdict)
      return {
        actual: seen.actual,
        usedLocator: seen.resolved?.used,
        ...(seen.resolved && seen.resolved.tried.length > 1 ? { triedLocators: seen.resolved.tried } : {}),
      };
    const pause = POLL_MS[Math.min(attempt + 1, POLL_MS.length - 1)]!;
    if (deadline.remaining() <= pause) throw outOfTime(step, seen);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
