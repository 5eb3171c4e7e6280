// What a step leaves behind besides its status: a screenshot (per step.exec.evidence: onFail by
// default, always, never; a screenshot step always), uploaded through POST /otp/evidence and named
// in step.result evidence.screenshotAssetId, the console errors and page errors seen during it, and
// the main document's navigations with their HTTP status (evidence.navigations).
import type { BrowserContext, Page, Request } from 'playwright-core';
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

export interface Navigation {
  url: string;
  status?: number;
  statusText?: string;
  error?: string;
}

const MAX_NAVIGATIONS = 20;
/** Text of the page's server, kept to what the step result may carry (no NUL, no lone surrogate). */
const storable = (text: string, max: number) => text.replace(/[\u0000\uD800-\uDFFF]/gu, '\uFFFD').slice(0, max);
const withoutQuery = (url: string) => url.replace(/[?#].*$/s, '');

/**
 * The main document's navigations, per step: each with the HTTP status of its answer, or the browser's
 * error when it got none, or, when the step ends first, that it still waits for its first byte. Triage
 * tells an error page or an unreachable server (the environment) from the product by them.
 */
export class NavigationLog {
  private seen: Navigation[] = [];
  private readonly waiting = new Map<Request, Navigation>();

  attach(context: BrowserContext): void {
    const mainDocument = (request: Request) => {
      if (!request.isNavigationRequest()) return false;
      try {
        const frame = request.frame();
        return frame.parentFrame() === null;
      } catch {
        return false; // a service worker's request has no frame
      }
    };
    context.on('request', (request) => {
      if (!mainDocument(request)) return;
      const entry: Navigation = { url: storable(withoutQuery(request.url()), 2000) };
      this.waiting.set(request, entry);
      this.push(entry);
    });
    context.on('response', (response) => {
      const entry = this.waiting.get(response.request());
      if (!entry) return;
      this.waiting.delete(response.request());
      entry.status = response.status();
      if (response.statusText()) entry.statusText = storable(response.statusText(), 200);
    });
    context.on('requestfailed', (request) => {
      const entry = this.waiting.get(request);
      if (!entry) return;
      this.waiting.delete(request);
      entry.error = storable(request.failure()?.errorText ?? 'failed', 500);
    });
  }

  private push(entry: Navigation): void {
    if (this.seen.length < MAX_NAVIGATIONS) this.seen.push(entry);
  }

  /**
   * The navigations since the last call. One still unanswered: on a failed step, it says it waits for
   * its first byte (and is forgotten); on a passed one, it moves on to the next step's list.
   */
  take(stepFailed: boolean): Navigation[] {
    const seen = this.seen;
    const carried: Navigation[] = [];
    for (const [request, entry] of this.waiting) {
      if (!stepFailed) {
        carried.push(entry);
        continue;
      }
      entry.error = 'no response: still waiting for the first byte';
      this.waiting.delete(request);
    }
    this.seen = carried;
    return seen.filter((entry) => !carried.includes(entry));
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
