// The 16 step actions, each performed in the run's page as otp-runner performs them: locators through
// the page engine, actionability waited for in the page (attached, visible, stable, enabled, not
// covered), trusted input through the debugger. A wait that runs out of the step's time is E_TIMEOUT,
// a locator that never matches E_LOCATOR_NOT_FOUND (locate.ts), an assert that does not hold
// E_ASSERT_FAILED (asserts.ts).
import type { ActionStepOf, ProtocolStepAction } from '../../../src/otp/protocol/schemas/actions.js';
import type { Locator, LocatorOrCandidates, TriedLocator } from '../../../src/otp/protocol/schemas/locator.js';
import { firstLine } from '../../../src/otp/protocol/step-rules.js';
import { performAssert } from './asserts.js';
import type { RunGuard } from './guard.js';
import { click, hover, press, typeText } from './input.js';
import {
  candidatesOf,
  counted,
  currentLocator,
  healedTries,
  notFound,
  type Resolved,
  resolveLocator,
  singleLocator,
} from './locate.js';
import { EngineError, NavigationFailed, type RunPage, TimeoutError } from './page.js';
import { type Deadline, isTimeout, StepError } from './step-error.js';

export interface ActionEnv {
  page: RunPage;
  deadline: Deadline;
  guard: RunGuard;
  allowEval: boolean;
  /** Fetches an asset through the service (upload steps): its name, type and bytes in base64. */
  download(assetId: string): Promise<{ name: string; type: string; base64: string }>;
}

export interface ActionOutcome {
  actual?: string;
  usedLocator?: Locator;
  triedLocators?: TriedLocator[];
  /** A screenshot step's image (PNG, base64), stored as the step's evidence. */
  screenshot?: string;
}

type Act = (loc: Locator, resolved: Resolved) => Promise<unknown>;

/** Resolves the step's locator and acts on it; a time-out after the element was found is E_TIMEOUT. */
async function onElement(env: ActionEnv, spec: LocatorOrCandidates, act: Act): Promise<ActionOutcome> {
  const single = singleLocator(spec);
  const resolved = single ?? (await resolveLocator(env.page, spec, env.deadline));
  try {
    await act(resolved.used, resolved);
  } catch (err) {
    if (err instanceof StepError) throw err;
    let tried = resolved.tried;
    if (single && isTimeout(err)) {
      const look = await counted(env.page, single.used);
      if (!look.found) throw notFound(look.tried);
      tried = look.tried;
    }
    const extra = { usedLocator: resolved.used, triedLocators: tried };
    if (isTimeout(err))
      throw new StepError(
        'E_TIMEOUT',
        `the element was found but the action did not complete in time: ${firstLine(err)}`,
        extra,
      );
    throw new StepError('E_INTERNAL', firstLine(err), extra);
  }
  return { usedLocator: resolved.used, ...healedTries(resolved) };
}

/** The point to act at once the element is actionable; a TimeoutError saying what it waited for. */
async function pointOf(env: ActionEnv, loc: Locator, needs: { enabled: boolean; pointer: boolean }) {
  const ready = await env.page.engine('actionPoint', loc, needs, env.deadline.remaining());
  if (!ready.ok) throw new TimeoutError(`waiting for the element to be ${ready.waiting}`);
  return { x: ready.x!, y: ready.y! };
}

async function attached(env: ActionEnv, loc: Locator): Promise<void> {
  if (!(await env.page.engine('waitState', loc, 'attached', env.deadline.remaining())))
    throw new TimeoutError('waiting for the element to be attached');
}

const pointerAction =
  (env: ActionEnv, options: Parameters<typeof click>[2] = {}): Act =>
  async (loc) =>
    click(env.page.cdp, await pointOf(env, loc, { enabled: true, pointer: true }), options);

/** At most this long, a failed navigate step waits for the navigation that interrupted it to be answered. */
const SETTLE_MS = 2_000;

async function navigate(env: ActionEnv, step: ActionStepOf['navigate']): Promise<ActionOutcome> {
  const blockedMessage = (url: string) => `navigation to ${url} blocked: its origin is not in run.start.allowedOrigins`;
  if (!env.guard.allows(step.url)) throw new StepError('E_NAVIGATION_BLOCKED', blockedMessage(step.url));
  try {
    await env.page.navigate(step.url, step.waitUntil ?? 'load', env.deadline.remaining());
    return {};
  } catch (err) {
    await env.page.settled(Math.min(SETTLE_MS, env.deadline.remaining()));
    const blocked = env.guard.take();
    const message = firstLine(err);
    if (blocked.length || /ERR_BLOCKED_BY_CLIENT/.test(message))
      throw new StepError('E_NAVIGATION_BLOCKED', blockedMessage(blocked[0] ?? step.url));
    if (isTimeout(err)) throw new StepError('E_TIMEOUT', message);
    throw new StepError('E_INTERNAL', err instanceof NavigationFailed ? `${message} at ${step.url}` : message);
  }
}

async function waitStep(env: ActionEnv, step: ActionStepOf['wait']): Promise<ActionOutcome> {
  const { page, deadline } = env;
  if (step.ms !== undefined) {
    if (step.ms > deadline.remaining())
      throw new StepError('E_TIMEOUT', `wait of ${step.ms} ms is longer than the step's time-out`);
    await new Promise((resolve) => setTimeout(resolve, step.ms));
    return {};
  }
  if (step.networkidle) {
    await page.networkIdle(deadline.remaining()).catch((err) => {
      throw new StepError(isTimeout(err) ? 'E_TIMEOUT' : 'E_INTERNAL', `network did not go idle: ${firstLine(err)}`);
    });
    return {};
  }
  const state = step.state ?? 'visible';
  const spec = step.locator!;
  if (state === 'hidden' || state === 'detached') {
    // Gone means gone under every candidate.
    const current = await currentLocator(page, spec);
    if (!(await page.engine('waitGone', candidatesOf(spec), state, deadline.remaining())))
      throw new StepError('E_TIMEOUT', `element still ${state === 'hidden' ? 'visible' : 'attached'}`, {
        triedLocators: current.tried,
      });
    return { usedLocator: current.used };
  }
  try {
    return await onElement(env, spec, async (loc) => {
      if (!(await page.engine('waitState', loc, state, deadline.remaining())))
        throw new TimeoutError(`waiting for the element to be ${state}`);
    });
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
    await env.page.engine('scrollPage', dx, dy);
    return {};
  }
  return onElement(env, step.locator, async (loc) => {
    if (step.into) await pointOf(env, loc, { enabled: false, pointer: false });
    if (dx || dy) {
      await attached(env, loc);
      await env.page.engine('scrollElement', loc, dx, dy);
    }
  });
}

async function upload(env: ActionEnv, step: ActionStepOf['upload']): Promise<ActionOutcome> {
  let file: Awaited<ReturnType<ActionEnv['download']>>;
  try {
    file = await env.download(step.assetId);
  } catch (err) {
    throw new StepError('E_INTERNAL', `upload: ${firstLine(err)}`);
  }
  return onElement(env, step.locator, async (loc) => {
    await attached(env, loc);
    await env.page.engine('setFile', loc, file);
  });
}

async function evaluate(env: ActionEnv, step: ActionStepOf['eval']): Promise<ActionOutcome> {
  if (!env.allowEval)
    throw new StepError('E_CAPABILITY', 'eval steps are refused: "allow eval" is off in the extension');
  let result: unknown;
  try {
    result = await env.page.evaluate(step.script);
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    // A script that throws is how eval steps say "does not hold".
    throw new StepError('E_ASSERT_FAILED', `script threw: ${firstLine(err)}`);
  }
  if (result === undefined) return {};
  return { actual: typeof result === 'string' ? result : JSON.stringify(result) };
}

/** check / uncheck: clicked when not in that state yet, and the click must change it. */
function setChecked(env: ActionEnv, want: boolean): Act {
  return async (loc) => {
    await attached(env, loc);
    const state = async () => (await env.page.engine('state', loc, 'checked')) === 'checked';
    if ((await state()) === want) return;
    await click(env.page.cdp, await pointOf(env, loc, { enabled: true, pointer: true }));
    if ((await state()) !== want) throw new Error('Clicking the checkbox did not change its state');
  };
}

async function typeInto(env: ActionEnv, step: ActionStepOf['type'], loc: Locator): Promise<void> {
  if (step.clear) {
    await pointOf(env, loc, { enabled: true, pointer: false });
    await env.page.engine('focusForTyping', loc, true);
    await press(env.page.cdp, 'Delete');
  } else {
    await attached(env, loc);
    await env.page.engine('focusForTyping', loc, false);
  }
  await typeText(env.page.cdp, step.text, step.delayMs);
}

export async function perform(step: ProtocolStepAction, env: ActionEnv): Promise<ActionOutcome> {
  const { page } = env;
  switch (step.action) {
    case 'navigate':
      return navigate(env, step);
    case 'click':
      return onElement(env, step.locator, pointerAction(env, { modifiers: step.modifiers ?? [] }));
    case 'dblclick':
      return onElement(env, step.locator, pointerAction(env, { clickCount: 2 }));
    case 'rightClick':
      return onElement(env, step.locator, pointerAction(env, { button: 'right' }));
    case 'hover':
      return onElement(env, step.locator, async (loc) =>
        hover(page.cdp, await pointOf(env, loc, { enabled: false, pointer: true })),
      );
    case 'type':
      return onElement(env, step.locator, (loc) => typeInto(env, step, loc));
    case 'press':
      if (!step.locator) {
        await press(page.cdp, step.key);
        return {};
      }
      return onElement(env, step.locator, async (loc) => {
        await attached(env, loc);
        await page.engine('focusForTyping', loc, false);
        await press(page.cdp, step.key);
      });
    case 'select':
      return onElement(env, step.locator, async (loc) => {
        await pointOf(env, loc, { enabled: true, pointer: false });
        await page.engine('selectOption', loc, step.by ?? 'value', step.value);
      });
    case 'check':
      return onElement(env, step.locator, setChecked(env, true));
    case 'uncheck':
      return onElement(env, step.locator, setChecked(env, false));
    case 'scroll':
      return scroll(env, step);
    case 'upload':
      return upload(env, step);
    case 'wait':
      return waitStep(env, step);
    case 'screenshot':
      return { screenshot: await page.screenshot(step.fullPage ?? false) };
    case 'assert':
      return performAssert(page, step, env.deadline);
    case 'eval':
      return evaluate(env, step);
  }
}
