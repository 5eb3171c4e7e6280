// The assert step, as otp-runner performs it (the comparison rules are the protocol's, step-rules.ts):
// observed again and again until it holds or the step's time runs out, the last observed value in
// `actual` on a pass as on a failure. A single locator is read at once (the read waits for its
// element); candidates are looked at first, to pick the one that matches.
import type { ActionStepOf } from '../../../src/otp/protocol/schemas/actions.js';
import type { Locator, TriedLocator } from '../../../src/otp/protocol/schemas/locator.js';
import {
  ASSERT_POLL_MS,
  describeLocator,
  holds,
  NEEDS_ELEMENT,
  normaliseSpace,
  STATE_WORD,
} from '../../../src/otp/protocol/step-rules.js';
import { counted, currentLocator, type Resolved, singleLocator } from './locate.js';
import type { RunPage } from './page.js';
import { type Deadline, StepError } from './step-error.js';

type AssertStep = ActionStepOf['assert'];

interface Observation {
  actual: string;
  resolved?: Resolved;
  /** The element needed was not there. */
  missing?: boolean;
}

async function observe(page: RunPage, step: AssertStep, deadline: Deadline): Promise<Observation> {
  if (step.kind === 'url') return { actual: page.url };
  if (step.kind === 'title') return { actual: await page.engine('title') };
  const resolved = singleLocator(step.locator!) ?? (await currentLocator(page, step.locator!));
  if (step.kind === 'count') return { actual: String((await page.engine('probe', resolved.used)).count), resolved };
  if (step.kind === 'visible' || step.kind === 'hidden')
    return { actual: await page.engine('state', resolved.used, 'visible'), resolved };
  if (!resolved.matched) return { actual: '', resolved, missing: true };
  // A single locator's read waits for its element, for what is left of the step.
  const wait = resolved.single ? deadline.remaining() : 0;
  const seen = await page.engine('read', resolved.used, step.kind, step.attribute, wait);
  if (!seen.found) {
    const look = await counted(page, resolved.used);
    return { actual: '', resolved: { ...resolved, tried: look.tried, matched: false }, missing: true };
  }
  const actual = seen.actual!;
  return { actual: step.kind === 'text' ? normaliseSpace(actual) : actual, resolved };
}

function describeSpec(spec: NonNullable<AssertStep['locator']>): string {
  return 'candidates' in spec ? spec.candidates.map(describeLocator).join(' | ') : describeLocator(spec);
}

function expectation(step: AssertStep): string {
  const subject =
    step.kind === 'url' || step.kind === 'title'
      ? `page ${step.kind}`
      : `${step.kind}${step.attribute ? ` "${step.attribute}"` : ''} of ${describeSpec(step.locator!)}`;
  if (step.kind in STATE_WORD) return `${subject.replace(/^\w+ of /, '')} to be ${step.kind}`;
  return `${subject} ${step.op ?? 'equals'} "${step.expected ?? ''}"`;
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

export async function performAssert(page: RunPage, step: AssertStep, deadline: Deadline): Promise<AssertResult> {
  const op = step.op ?? 'equals';
  for (let attempt = 0; ; attempt++) {
    const seen = await observe(page, step, deadline);
    const verdict = seen.missing ? false : holds(step.kind, op, seen.actual, step.expected);
    if (typeof verdict === 'string')
      throw new StepError('E_ASSERT_FAILED', verdict, { actual: seen.actual, usedLocator: seen.resolved?.used });
    if (verdict)
      return {
        actual: seen.actual,
        usedLocator: seen.resolved?.used,
        ...(seen.resolved && seen.resolved.tried.length > 1 ? { triedLocators: seen.resolved.tried } : {}),
      };
    const pause = ASSERT_POLL_MS[Math.min(attempt + 1, ASSERT_POLL_MS.length - 1)]!;
    if (deadline.remaining() <= pause) {
      if (seen.missing && NEEDS_ELEMENT.has(step.kind)) {
        throw new StepError('E_LOCATOR_NOT_FOUND', `no element matched ${describeSpec(step.locator!)}`, {
          actual: '',
          triedLocators: seen.resolved?.tried,
        });
      }
      throw failed(step, seen);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
