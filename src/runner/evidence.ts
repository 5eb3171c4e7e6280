// What a step leaves behind besides its status: a screenshot (per step.exec.evidence: onFail by
// default, always, never; a screenshot step always), uploaded through POST /otp/evidence and named
// in step.result evidence.screenshotAssetId, and the console errors and page errors seen during it.
import type { BrowserContext, Page } from 'playwright-core';
import type { ServiceRest } from './service-rest.js';

const MAX_CONSOLE_ERRORS = 100;
const MAX_ERROR_CHARS = 2000;
/** A failed step's screenshot must not push its result past the service's grace (2 s). */
const EVIDENCE_SCREENSHOT_MS = 1000;

export type EvidenceMode = 'always' | 'onFail' | 'never';

/** Console errors (console.error, failed loads) and uncaught page errors, per step. */
export class ConsoleErrors {
  private seen: string[] = [];

  attach(context: BrowserContext): void {
    context.on('console', (msg) => {
      if (msg.type() === 'error') this.push(msg.text());
    });
    context.on('weberror', (webError) => {
      const err = webError.error();
      this.push(`${err.name}: ${err.message}`);
    });
  }

  private push(text: string): void {
    if (this.seen.length < MAX_CONSOLE_ERRORS) this.seen.push(text.slice(0, MAX_ERROR_CHARS));
  }

  /** The errors since the last call. */
  take(): string[] {
    const seen = this.seen;
    this.seen = [];
    return seen;
  }
}

export function wantsScreenshot(mode: EvidenceMode | undefined, status: string): boolean {
  const m = mode ?? 'onFail';
  return m === 'always' || (m === 'onFail' && (status === 'fail' || status === 'error'));
}

/** A screenshot of the page as the step left it; undefined when the page cannot give one in time. */
export async function evidenceScreenshot(page: Page): Promise<Buffer | undefined> {
  try {
    return await page.screenshot({ timeout: EVIDENCE_SCREENSHOT_MS });
  } catch {
    return undefined;
  }
}

/** Uploads a step's screenshot; answers its asset id, or undefined (and says why) when it cannot. */
export async function storeScreenshot(
  rest: ServiceRest,
  runId: string,
  stepIndex: number,
  png: Buffer,
  log: (line: string) => void,
): Promise<string | undefined> {
  if (!rest.known) {
    log(`evidence of step ${stepIndex} not stored: the service's HTTP address is unknown (--api)`);
    return undefined;
  }
  try {
    return await rest.uploadEvidence(runId, stepIndex, {
      name: `${runId}-step-${stepIndex}.png`,
      type: 'image/png',
      data: png,
    });
  } catch (err) {
    log(`evidence of step ${stepIndex} not stored: ${(err as Error).message}`);
    return undefined;
  }
}
