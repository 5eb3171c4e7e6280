// The 16 step actions of spec 2.6, each performed with playwright-core on the run's page. Every
// Playwright call gets the step's remaining time; a call that runs out of it is E_TIMEOUT, a locator
// that never matches is E_LOCATOR_NOT_FOUND (locators.ts), an assert that does not hold is
// E_ASSERT_FAILED (asserts.ts).
import type { Page, Locator as PwLocator } from 'playwright-core';
import type { ActionStepOf, ProtocolStepAction } from '../otp/protocol/schemas/actions.js';
import type { Locator, LocatorOrCandidates, TriedLocator } from '../otp/protocol/schemas/locator.js';
import { performAssert } from './asserts.js';
import type { Deadline } from './deadline.js';
import {
  buildLocator,
  candidatesOf,
  counted,
  currentLocator,
  notFound,
  type Resolved,
  resolveLocator,
  singleLocator,
} from './locators.js';
import type { OriginGuard } from './origins.js';
import type { DownloadedFile } from './service-rest.js';
import { isTimeout, StepError, shortMessage } from './step-error.js';

export interface ActionEnv {
  page: Page;
  deadline: Deadline;
  guard: OriginGuard;
  allowEval: boolean;
  /** Fetches an asset through the service's signed link (upload steps). */
  download(assetId: string): Promise<DownloadedFile>;
}

export interface ActionOutcome {
  actual?: string;
  usedLocator?: Locator;
  /** The candidates tried, when the one used was not the first (step.result triedLocators). */
  triedLocators?: TriedLocator[];
  /** A screenshot step's image, stored as the step's evidence. */
  screenshot?: Buffer;
}

/** Resolves the step's locator and acts on it; a time-out after the element was found is E_TIMEOUT. */
async function onElement(
  env: ActionEnv,
  spec: LocatorOrCandidates,
  act: (target: PwLocator, timeout: number, r: Resolved) => Promise<unknown>,
): Promise<ActionOutcome> {
  const single = singleLocator(env.page, spec);
  const resolved = single ?? (await resolveLocator(env.page, spec, env.deadline));
  try {
    await act(resolved.target, env.deadline.pw(), resolved);
  } catch (err) {
    if (err instanceof StepError) throw err;
    let tried = resolved.tried;
    if (single && isTimeout(err)) {
      const look = await counted(single);
      if (!look.found) throw notFound(look.tried);
      tried = look.tried;
    }
    const extra = { usedLocator: resolved.used, triedLocators: tried };
    if (isTimeout(err))
      throw new StepError(
        'E_TIMEOUT',
        `the element was found but the action did not complete in time: ${shortMessage(err)}`,
        extra,
      );
    throw new StepError('E_INTERNAL', shortMessage(err), extra);
  }
  return { usedLocator: resolved.used, ...healedTries(resolved) };
}

/** The tried candidates of a step that passed through another than its first (for healing proposals). */
export function healedTries(resolved: Resolved | undefined): { triedLocators?: TriedLocator[] } {
  return resolved && resolved.tried.length > 1 ? { triedLocators: resolved.tried } : {};
}

/** At most this long, a failed navigate step waits for the navigation that interrupted it to be answered. */
const SETTLE_MS = 2_000;

const blockedError = (url: string) =>
  new StepError('E_NAVIGATION_BLOCKED', `navigation to ${url} blocked: its origin is not in run.start.allowedOrigins`);

/** Why a navigation failed, as the step's error; 'again' once after a navigation interrupted by a blocked one. */
async function navigationFailure(
  env: ActionEnv,
  step: ActionStepOf['navigate'],
  err: unknown,
  attempt: number,
): Promise<StepError | 'again'> {
  const message = shortMessage(err);
  // A page that sends itself elsewhere as it loads interrupts the goto: see where that went first.
  await env.guard.settled(Math.min(SETTLE_MS, env.deadline.remaining()));
  const blocked = env.guard.take();
  const interruptedBy = /interrupted by another navigation to "([^"]+)"/.exec(message)?.[1];
  if (interruptedBy && !interruptedBy.startsWith('chrome-error:') && !env.guard.allows(interruptedBy))
    blocked.push(interruptedBy);
  if (blocked.length || /ERR_BLOCKED_BY_CLIENT/.test(message)) return blockedError(blocked[0] ?? step.url);
  if (isTimeout(err)) return new StepError('E_TIMEOUT', message);
  // After a blocked navigation Chromium may still be on its way to chrome-error://: once more.
  if (attempt === 0 && /interrupted by another navigation/.test(message)) return 'again';
  // Behind the run's gate Chromium says only ERR_SOCKS_CONNECTION_FAILED; the gate knows why.
  const why = env.guard.failure(step.url);
  return new StepError('E_INTERNAL', why ? `${message} (could not connect: ${why})` : message);
}

async function navigate(env: ActionEnv, step: ActionStepOf['navigate']): Promise<ActionOutcome> {
  if (!env.guard.allows(step.url)) throw blockedError(step.url);
  for (let attempt = 0; ; attempt++) {
    try {
      await env.page.goto(step.url, { waitUntil: step.waitUntil ?? 'load', timeout: env.deadline.pw() });
      return {};
    } catch (err) {
      const failure = await navigationFailure(env, step, err, attempt);
      if (failure !== 'again') throw failure;
    }
  }
}

async function wait(env: ActionEnv, step: ActionStepOf['wait']): Promise<ActionOutcome> {
  const { page, deadline } = env;
  if (step.ms !== undefined) {
    if (step.ms > deadline.remaining())
      throw new StepError('E_TIMEOUT', `wait of ${step.ms} ms is longer than the step's time-out`);
    await new Promise((resolve) => setTimeout(resolve, step.ms));
    return {};
  }
  if (step.networkidle) {
    await page.waitForLoadState('networkidle', { timeout: deadline.pw() }).catch((err) => {
      throw new StepError(isTimeout(err) ? 'E_TIMEOUT' : 'E_INTERNAL', `network did not go idle: ${shortMessage(err)}`);
    });
    return {};
  }
  const state = step.state ?? 'visible';
  const spec = step.locator!;
  if (state === 'hidden' || state === 'detached') {
    // Gone means gone under every candidate.
    const candidates = candidatesOf(spec);
    const current = await currentLocator(page, spec);
    try {
      await Promise.all(
        candidates.map((c) =>
          buildLocator(page, c)
            .nth(c.nth ?? 0)
            .waitFor({ state, timeout: deadline.pw() }),
        ),
      );
    } catch (err) {
      throw new StepError(
        isTimeout(err) ? 'E_TIMEOUT' : 'E_INTERNAL',
        `element still ${state === 'hidden' ? 'visible' : 'attached'}: ${shortMessage(err)}`,
        { triedLocators: current.tried },
      );
    }
    return { usedLocator: current.used };
  }
  try {
    return await onElement(env, spec, (target, timeout) => target.waitFor({ state, timeout }));
  } catch (err) {
    // For a wait step, an element that never came is the wait running out of time.
    if (err instanceof StepError && err.code === 'E_LOCATOR_NOT_FOUND')
      throw new StepError('E_TIMEOUT', `waited for ${state}: ${err.message}`, err.extra);
    throw err;
  }
}

async function scroll(env: ActionEnv, step: ActionStepOf['scroll']): Promise<ActionOutcome> {
  const dx = step.dx ?? 0;
  const dy = step.dy ?? 0;
  if (!step.locator) {
    await env.page.evaluate(([x, y]) => window.scrollBy({ left: x, top: y, behavior: 'instant' }), [dx, dy] as const);
    return {};
  }
  return onElement(env, step.locator, async (target, timeout) => {
    if (step.into) await target.scrollIntoViewIfNeeded({ timeout });
    if (dx || dy)
      await target.evaluate((el, [x, y]) => el.scrollBy({ left: x, top: y, behavior: 'instant' }), [dx, dy] as const, {
        timeout,
      });
  });
}

async function upload(env: ActionEnv, step: ActionStepOf['upload']): Promise<ActionOutcome> {
  let file: DownloadedFile;
  try {
    file = await env.download(step.assetId);
  } catch (err) {
    throw new StepError('E_INTERNAL', `upload: ${shortMessage(err)}`);
  }
  return onElement(env, step.locator, (target, timeout) =>
    target.setInputFiles({ name: file.name, mimeType: file.mimeType, buffer: file.buffer }, { timeout }),
  );
}

async function evaluate(env: ActionEnv, step: ActionStepOf['eval']): Promise<ActionOutcome> {
  if (!env.allowEval)
    throw new StepError('E_CAPABILITY', 'eval steps are refused: the runner was started without --allow-eval');
  let result: unknown;
  try {
    result = await env.page.evaluate(step.script);
  } catch (err) {
    // A script that throws is how eval steps say "does not hold".
    throw new StepError('E_ASSERT_FAILED', `script threw: ${shortMessage(err)}`);
  }
  if (result === undefined) return {};
  return { actual: typeof result === 'string' ? result : JSON.stringify(result) };
}

/** Without clear, typed text goes after what the field holds (focus alone puts the caret first). */
async function caretToEnd(target: PwLocator, timeout: number): Promise<void> {
  await target.focus({ timeout });
  await target.evaluate((el) => {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      try {
        el.setSelectionRange(el.value.length, el.value.length);
      } catch {
        // input types without a selection (number, email): the browser keeps its own caret
      }
    }
  });
}

function selectValue(step: ActionStepOf['select']): Parameters<PwLocator['selectOption']>[0] {
  if (step.by === 'index') return { index: Number(step.value) };
  if (step.by === 'label') return { label: String(step.value) };
  return { value: String(step.value) };
}

export async function perform(step: ProtocolStepAction, env: ActionEnv): Promise<ActionOutcome> {
  const { page, deadline } = env;
  switch (step.action) {
    case 'navigate':
      return navigate(env, step);
    case 'click':
      return onElement(env, step.locator, (t, timeout) =>
        t.click({ timeout, modifiers: step.modifiers ? [...step.modifiers] : undefined }),
      );
    case 'dblclick':
      return onElement(env, step.locator, (t, timeout) => t.dblclick({ timeout }));
    case 'rightClick':
      return onElement(env, step.locator, (t, timeout) => t.click({ timeout, button: 'right' }));
    case 'type':
      return onElement(env, step.locator, async (t, timeout) => {
        if (step.clear) await t.fill('', { timeout });
        else await caretToEnd(t, timeout);
        await t.pressSequentially(step.text, { delay: step.delayMs, timeout: deadline.pw() });
      });
    case 'press':
      if (!step.locator) {
        await page.keyboard.press(step.key);
        return {};
      }
      return onElement(env, step.locator, (t, timeout) => t.press(step.key, { timeout }));
    case 'select':
      return onElement(env, step.locator, (t, timeout) => t.selectOption(selectValue(step), { timeout }));
    case 'check':
      return onElement(env, step.locator, (t, timeout) => t.check({ timeout }));
    case 'uncheck':
      return onElement(env, step.locator, (t, timeout) => t.uncheck({ timeout }));
    case 'hover':
      return onElement(env, step.locator, (t, timeout) => t.hover({ timeout }));
    case 'scroll':
      return scroll(env, step);
    case 'upload':
      return upload(env, step);
    case 'wait':
      return wait(env, step);
    case 'screenshot':
      return { screenshot: await page.screenshot({ fullPage: step.fullPage ?? false, timeout: deadline.pw() }) };
    case 'assert':
      return performAssert(page, step, deadline);
    case 'eval':
      return evaluate(env, step);
  }
}
