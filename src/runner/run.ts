// One run on the runner: its own fresh browser context (no cookies or storage shared with another
// run), the origin guard of its allowedOrigins, and its steps performed strictly one after another.
// The frames of a run are queued on `chain` in the order they arrived, so a step.exec that arrives
// while run.start is still opening the context waits for it (the race the issue names).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { cleanObservedText } from '../otp/protocol/observed-text.js';
import type { RunStartPayload, StepExecPayload, StepResultPayload } from '../otp/protocol/schemas/messages.js';
import { stepResult } from '../otp/protocol/step-result.js';
import { type ActionOutcome, perform } from './actions.js';
import { Deadline } from './deadline.js';
import { ConsoleErrors, evidenceScreenshot, NavigationLog, storeScreenshot, wantsScreenshot } from './evidence.js';
import { OriginGuard } from './origins.js';
import type { ServiceRest } from './service-rest.js';
import { StepError, shortMessage } from './step-error.js';

/**
 * The outer guard fires this long after a step's own deadline, so that the step's own error wins:
 * after an action times out the runner still counts what its locator matches, to tell
 * E_LOCATOR_NOT_FOUND from E_TIMEOUT, and on a busy machine that count alone takes a noticeable part of
 * a second (docs/decisions.md, "Figures behind code"). Well inside the service's own grace
 * (OTP_STEP_GRACE_MS, 2 s by default).
 */
const GUARD_MARGIN_MS = 1_000;
/**
 * How long the end of a step waits for the main-frame navigations in flight (the run's page's and its
 * popups') to be answered: a response, or a refusal and its error page. So a popup refused a few
 * milliseconds after the click that opened it fails that click's step. Waited only while such a
 * navigation is in flight; a refusal seen later fails the step in which it is seen.
 */
const NAVIGATION_SETTLE_MS = 2_000;

export interface RunDeps {
  browser(): Promise<Browser>;
  rest: ServiceRest;
  allowEval: boolean;
  log(line: string): void;
  /** Sends the step.result of the step.exec whose id is ref. */
  sendResult(runId: string, ref: string, payload: StepResultPayload): void;
  /** A step begins (after the steps before it). */
  stepStarted?(runId: string, stepIndex: number): void;
}

export class RunExecutor {
  private context?: BrowserContext;
  private page?: Page;
  private readonly guard: OriginGuard;
  private readonly console = new ConsoleErrors();
  private readonly navigations = new NavigationLog();
  private chain: Promise<void>;
  private readonly abort = new AbortController();
  private closed?: Promise<void>;
  /** Why the context could not be opened; every step of the run then errors with it. */
  private openError?: Error;
  /** Each step received, by attempt and stepIndex: the step.exec to answer and, once performed, its result. */
  private readonly steps = new Map<string, { ref: string; result?: StepResultPayload }>();

  constructor(
    readonly runId: string,
    readonly start: RunStartPayload,
    private readonly deps: RunDeps,
  ) {
    this.guard = new OriginGuard(start.allowedOrigins, (line) => deps.log(`run ${runId}: ${line}`));
    this.opened = this.open().catch((err) => {
      this.openError = err as Error;
      deps.log(`run ${runId}: could not open a browser context: ${shortMessage(err)}`);
    });
    this.chain = this.opened;
  }

  private readonly opened: Promise<void>;

  get cancelled(): boolean {
    return this.abort.signal.aborted;
  }

  private async open(): Promise<void> {
    const browser = await this.deps.browser();
    // Every connection of the context goes through the run's gate (origins.ts, gate.ts).
    const context = await browser.newContext({ proxy: await this.guard.openGate() });
    this.context = context;
    this.console.attach(context);
    this.navigations.attach(context);
    await this.guard.install(context);
    this.page = await context.newPage();
  }

  /**
   * Queues a step behind everything the run received before it. A step is its stepIndex: one already
   * received is never performed again (after a resume the service sends the step in flight again,
   * docs/protocol.md "Each step runs once"): its result goes out again, or when it is done, answering
   * the newest step.exec.
   */
  enqueue(ref: string, exec: StepExecPayload): void {
    // A retried test case (step.exec attempt 2, 3...) performs its steps again: a new key.
    const key = `${exec.attempt ?? 1}:${exec.stepIndex}`;
    const known = this.steps.get(key);
    if (known) {
      known.ref = ref;
      if (known.result && !this.cancelled) this.deps.sendResult(this.runId, ref, known.result);
      return;
    }
    const entry: { ref: string; result?: StepResultPayload } = { ref };
    this.steps.set(key, entry);
    this.chain = this.chain.then(async () => {
      if (this.cancelled) return;
      // The first step of a retried case starts over in a context of its own: nothing of the failed attempt stays.
      if (exec.freshContext && !this.openError)
        await this.freshContext().catch((err) => (this.openError = err as Error));
      this.deps.stepStarted?.(this.runId, exec.stepIndex);
      entry.result = await this.step(exec);
      // A page's text may hold what the service cannot store (and a cut to a limit can split a
      // surrogate pair): sent replaced, and said so in textReplaced.
      cleanObservedText(entry.result);
      // A cancelled run's step is recorded by the service (E_CANCELLED); a late result would be refused.
      if (!this.cancelled) this.deps.sendResult(this.runId, entry.ref, entry.result);
    });
  }

  private async freshContext(): Promise<void> {
    const old = this.context;
    this.context = undefined;
    this.page = undefined;
    await old?.close().catch(() => undefined);
    const browser = await this.deps.browser();
    const context = await browser.newContext({ proxy: this.guard.gateProxy() });
    this.context = context;
    this.console.attach(context);
    this.navigations.attach(context);
    await this.guard.install(context);
    this.page = await context.newPage();
  }

  /** run.cancel: the step in flight stops at once (its context is closed under it); no result is sent. */
  cancel(): Promise<void> {
    this.abort.abort(new StepError('E_CANCELLED', 'the run was cancelled'));
    return this.close();
  }

  /** run.finished (or the session gone): after the queued frames, the context goes. */
  finish(): Promise<void> {
    return (this.chain = this.chain.then(() => this.close()));
  }

  close(): Promise<void> {
    return (this.closed ??= (async () => {
      // A cancel during run.start: the context being opened is closed once it exists.
      await this.opened;
      await this.context?.close().catch(() => undefined);
      await this.guard.close();
    })());
  }

  private async step(exec: StepExecPayload): Promise<StepResultPayload> {
    const deadline = new Deadline(exec.timeoutMs);
    this.console.take();
    this.navigations.take(false);
    let { outcome, failure } = await this.attempt(exec, deadline);
    // A navigation refused during the step (a click on a link to another origin, a redirect, a popup)
    // fails it; one still in flight is given a moment to be answered (at most NAVIGATION_SETTLE_MS).
    if (!this.cancelled) await this.guard.settled(Math.min(NAVIGATION_SETTLE_MS, deadline.remaining()));
    const durationMs = deadline.elapsed();
    failure = this.blockedFailure(failure);
    const result = stepResult(exec.stepIndex, durationMs, outcome, failure);
    if (this.cancelled) return result;
    const evidence = await this.evidence(exec, result.status, outcome);
    if (Object.keys(evidence).length) result.evidence = evidence;
    return result;
  }

  /** The step performed: what it found, or why it failed. */
  private async attempt(
    exec: StepExecPayload,
    deadline: Deadline,
  ): Promise<{ outcome: ActionOutcome; failure?: StepError }> {
    try {
      if (this.openError || !this.page)
        throw new StepError('E_INTERNAL', `no browser context: ${this.openError?.message ?? 'closed'}`);
      const page = this.page;
      const outcome = await this.guarded(deadline, () =>
        perform(exec.step, {
          page,
          deadline,
          guard: this.guard,
          allowEval: this.deps.allowEval,
          download: (assetId) => this.deps.rest.downloadAsset(assetId),
        }),
      );
      return { outcome };
    } catch (err) {
      return { outcome: {}, failure: err instanceof StepError ? err : new StepError('E_INTERNAL', shortMessage(err)) };
    }
  }

  /** A navigation the gate refused during the step fails it, whatever else it said. */
  private blockedFailure(failure: StepError | undefined): StepError | undefined {
    const blocked = this.guard.take();
    if (!blocked.length || failure?.code === 'E_NAVIGATION_BLOCKED' || this.cancelled) return failure;
    return new StepError(
      'E_NAVIGATION_BLOCKED',
      `navigation to ${blocked[0]} blocked: its origin is not in run.start.allowedOrigins`,
      failure?.extra ?? {},
    );
  }

  /** The step's evidence: a screenshot as its policy asks, the console's errors, the navigations. */
  private async evidence(
    exec: StepExecPayload,
    status: StepResultPayload['status'],
    outcome: ActionOutcome,
  ): Promise<NonNullable<StepResultPayload['evidence']>> {
    const evidence: NonNullable<StepResultPayload['evidence']> = {};
    const png =
      outcome.screenshot ??
      (this.page && wantsScreenshot(exec.evidence, status) ? await evidenceScreenshot(this.page) : undefined);
    if (png) {
      const assetId = await storeScreenshot(this.deps.rest, this.runId, exec.stepIndex, png, this.deps.log);
      if (assetId) evidence.screenshotAssetId = assetId;
    }
    const consoleErrors = this.console.take();
    if (consoleErrors.length) evidence.consoleErrors = consoleErrors;
    const navigations = this.navigations.take(status !== 'pass');
    if (navigations.length) evidence.navigations = navigations;
    return evidence;
  }

  /** The step's work, raced against its deadline (E_TIMEOUT) and run.cancel (E_CANCELLED). */
  private guarded<T>(deadline: Deadline, work: () => Promise<T>): Promise<T> {
    const signal = this.abort.signal;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new StepError('E_TIMEOUT', `the step did not finish within its ${deadline.at - deadline.started} ms`)),
        deadline.remaining() + GUARD_MARGIN_MS,
      );
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      work()
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        });
    });
  }
}
