// One run in the extension: a window of its own, the debugger on its tab, its allowedOrigins guard,
// and its steps performed strictly one after another (the frames of a run are chained in the order
// they arrived, so a step.exec never overtakes its run.start). Every step received is persisted
// (persist.ts) before it is performed: a step.exec sent again (after a resume, or to a restarted
// worker) gets the result already recorded, and a step that was in flight when the worker stopped is
// answered as not performed, never performed twice.
import { cleanObservedText } from '../../../src/otp/protocol/observed-text.js';
import type {
  RunStartPayload,
  StepExecPayload,
  StepResultPayload,
} from '../../../src/otp/protocol/schemas/messages.js';
import { stepResult } from '../../../src/otp/protocol/step-result.js';
import { firstLine } from '../../../src/otp/protocol/step-rules.js';
import { type ActionOutcome, perform } from './actions.js';
import { RunGuard } from './guard.js';
import { PageGone, RunPage } from './page.js';
import { forgetRun, type RunRecord, saveRun } from './persist.js';
import type { ServiceRest } from './rest.js';
import { Deadline, StepError } from './step-error.js';

/** The outer guard fires this long after a step's own deadline, so that the step's own error wins. */
const GUARD_MARGIN_MS = 1_000;
/** How long the end of a step waits for the main frame's navigation and popups in flight to be answered. */
const NAVIGATION_SETTLE_MS = 2_000;
/** Actions that change nothing in the page: performed again when a restarted worker is sent them again. */
const LOOKS_ONLY = new Set(['assert', 'wait', 'screenshot']);
/** A failed step's screenshot must not push its result past the service's grace (2 s). */
const EVIDENCE_SCREENSHOT_MS = 1_000;

export interface RunDeps {
  rest: ServiceRest;
  allowEval(): boolean;
  log(line: string): void;
  sendResult(runId: string, ref: string, payload: StepResultPayload): void;
  stepStarted?(runId: string, stepIndex: number): void;
}

export class RunExecutor {
  readonly guard: RunGuard;
  private page?: RunPage;
  private openError?: Error;
  private chain: Promise<void>;
  private readonly opened: Promise<void>;
  private cancelledFlag = false;
  private cancelStep?: (err: StepError) => void;
  private closing?: Promise<void>;

  constructor(
    private readonly record: RunRecord,
    private readonly deps: RunDeps,
  ) {
    this.guard = new RunGuard(record.start.allowedOrigins);
    this.opened = this.open().catch((err) => {
      this.openError = err as Error;
      deps.log(`run ${record.runId}: the run's window could not be opened: ${firstLine(err)}`);
    });
    this.chain = this.opened;
  }

  static start(runId: string, start: RunStartPayload, deps: RunDeps): RunExecutor {
    return new RunExecutor({ runId, start, steps: {} }, deps);
  }

  get runId(): string {
    return this.record.runId;
  }

  get tabId(): number | undefined {
    return this.page?.tabId;
  }

  private async open(): Promise<void> {
    const known =
      this.record.tabId !== undefined ? { tabId: this.record.tabId, windowId: this.record.windowId! } : undefined;
    const page = await RunPage.open(
      {
        requestPaused: (p, params) => this.guard.requestPaused(p, params),
        windowOpen: (url) => this.guard.windowOpen(url),
        detached: (reason) => this.detached(reason),
      },
      known,
    );
    this.page = page;
    this.record.tabId = page.tabId;
    this.record.windowId = page.windowId;
    await this.guard.watch(page.tabId);
    await saveRun(this.record);
  }

  /** The user pressed Cancel on the debugger bar: the run is cancelled at the service, as from the console. */
  private detached(reason: string): void {
    if (reason !== 'canceled_by_user') return;
    this.deps.log(`run ${this.runId}: the debugger was cancelled by the user; cancelling the run`);
    this.cancelledFlag = true;
    this.cancelStep?.(new StepError('E_CANCELLED', 'the user cancelled the debugger'));
    this.deps.rest
      .cancelRun(this.runId)
      .catch((err) => this.deps.log(`run ${this.runId}: cancel failed: ${firstLine(err)}`));
  }

  /** The run's tab was closed by the user: the step in flight and later ones error, saying so. */
  tabClosed(): void {
    this.page?.lost("the run's tab was closed");
  }

  /** Queues a step; one already received is answered with its recorded result, never performed again. */
  enqueue(ref: string, exec: StepExecPayload): void {
    const key = `${exec.attempt ?? 1}:${exec.stepIndex}`;
    const known = this.record.steps[key];
    if (known) {
      known.ref = ref;
      if (known.result && !this.cancelledFlag) this.deps.sendResult(this.runId, ref, known.result);
      return;
    }
    const entry: RunRecord['steps'][string] = { ref, action: exec.step.action };
    this.record.steps[key] = entry;
    const saved = saveRun(this.record);
    this.chain = this.chain.then(async () => {
      await saved;
      if (this.cancelledFlag) return;
      this.deps.stepStarted?.(this.runId, exec.stepIndex);
      entry.result = await this.step(exec);
      cleanObservedText(entry.result);
      await saveRun(this.record);
      if (!this.cancelledFlag) this.deps.sendResult(this.runId, entry.ref, entry.result);
    });
  }

  /**
   * After a worker restart: a step recorded without a result was in flight when the worker stopped.
   * One that only looks (assert, wait, screenshot) is performed when it is sent again: it changes
   * nothing. Whether any other took effect cannot be known, so it is not performed again: it errors,
   * saying why (docs/extension.md, "A stopped worker").
   */
  restoreInterrupted(): void {
    for (const [key, entry] of Object.entries(this.record.steps)) {
      if (entry.result) continue;
      if (LOOKS_ONLY.has(entry.action ?? '')) {
        delete this.record.steps[key];
        continue;
      }
      entry.result = {
        stepIndex: Number(key.split(':')[1]),
        status: 'error',
        durationMs: 0,
        error: {
          code: 'E_INTERNAL',
          message: "the extension's worker stopped while this step was in flight; it is not performed again",
        },
      };
    }
  }

  cancel(): Promise<void> {
    this.cancelledFlag = true;
    this.cancelStep?.(new StepError('E_CANCELLED', 'the run was cancelled'));
    return this.close();
  }

  finish(): Promise<void> {
    return (this.chain = this.chain.then(() => this.close()));
  }

  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.opened;
      await this.guard.close();
      await this.page?.close();
      await forgetRun(this.runId);
    })());
  }

  private async step(exec: StepExecPayload): Promise<StepResultPayload> {
    const deadline = new Deadline(exec.timeoutMs);
    this.page?.takeConsoleErrors();
    this.page?.takeNavigations();
    let outcome: ActionOutcome = {};
    let failure: StepError | undefined;
    try {
      if (this.openError || !this.page)
        throw new StepError('E_INTERNAL', `no window for the run: ${this.openError?.message ?? 'closed'}`);
      const page = this.page;
      outcome = await this.guarded(deadline, () =>
        perform(exec.step, {
          page,
          deadline,
          guard: this.guard,
          allowEval: this.deps.allowEval(),
          download: (assetId) => this.deps.rest.downloadAsset(assetId),
        }),
      );
    } catch (err) {
      failure = err instanceof StepError ? err : new StepError('E_INTERNAL', await this.whyFailed(err));
    }
    if (!this.cancelledFlag && this.page && !this.page.gone)
      await this.page.settled(Math.min(NAVIGATION_SETTLE_MS, deadline.remaining()), () => this.guard.popupsSettled());
    const durationMs = deadline.elapsed();
    const blocked = this.guard.take();
    if (blocked.length && failure?.code !== 'E_NAVIGATION_BLOCKED' && !this.cancelledFlag)
      failure = new StepError(
        'E_NAVIGATION_BLOCKED',
        `navigation to ${blocked[0]} blocked: its origin is not in run.start.allowedOrigins`,
        failure?.extra ?? {},
      );
    return this.result(exec, outcome, failure, durationMs);
  }

  /** An error of the debugger is often the tab going away: said so, rather than the debugger's words. */
  private async whyFailed(err: unknown): Promise<string> {
    if (err instanceof PageGone) return err.reason;
    if (this.page?.gone) return this.page.gone;
    const open =
      this.page &&
      (await chrome.tabs.get(this.page.tabId).then(
        () => true,
        () => false,
      ));
    return open === false ? "the run's tab was closed" : firstLine(err);
  }

  private async result(
    exec: StepExecPayload,
    outcome: ActionOutcome,
    failure: StepError | undefined,
    durationMs: number,
  ): Promise<StepResultPayload> {
    const result = stepResult(exec.stepIndex, durationMs, outcome, failure);
    if (this.cancelledFlag) return result;
    await this.evidence(exec, result.status, outcome, result);
    return result;
  }

  private async evidence(exec: StepExecPayload, status: string, outcome: ActionOutcome, result: StepResultPayload) {
    const evidence: NonNullable<StepResultPayload['evidence']> = {};
    const mode = exec.evidence ?? 'onFail';
    const wanted = mode === 'always' || (mode === 'onFail' && (status === 'fail' || status === 'error'));
    const png =
      outcome.screenshot ??
      (wanted && this.page && !this.page.gone ? await this.quickScreenshot(this.page) : undefined);
    if (png) {
      try {
        evidence.screenshotAssetId = await this.deps.rest.uploadEvidence(this.runId, exec.stepIndex, png);
      } catch (err) {
        this.deps.log(`evidence of step ${exec.stepIndex} not stored: ${firstLine(err)}`);
      }
    }
    const consoleErrors = this.page?.takeConsoleErrors() ?? [];
    if (consoleErrors.length) evidence.consoleErrors = consoleErrors;
    const navigations = this.page?.takeNavigations() ?? [];
    if (navigations.length) evidence.navigations = navigations;
    if (Object.keys(evidence).length) result.evidence = evidence;
  }

  private quickScreenshot(page: RunPage): Promise<string | undefined> {
    const timeout = new Promise<undefined>((resolve) => setTimeout(resolve, EVIDENCE_SCREENSHOT_MS));
    return Promise.race([page.screenshot(false).catch(() => undefined), timeout]);
  }

  /** The step's work, raced against its deadline (E_TIMEOUT) and a cancel (E_CANCELLED). */
  private guarded<T>(deadline: Deadline, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new StepError('E_TIMEOUT', `the step did not finish within its ${deadline.at - deadline.started} ms`)),
        deadline.remaining() + GUARD_MARGIN_MS,
      );
      this.cancelStep = reject;
      if (this.cancelledFlag) return reject(new StepError('E_CANCELLED', 'the run was cancelled'));
      work()
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          this.cancelStep = undefined;
        });
    });
  }
}
