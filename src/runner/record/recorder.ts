// The recorder (`otp-runner record`, docs/recording.md): an executor session that records. It opens
// Chromium, injects the page recorder (src/recorder/page/, shared with the extension) into every frame, and sends each step the
// page reports as one event.recorded frame; navigations the user makes (not those a click or Enter
// caused) become navigate steps. Sensitive text arrives without its value and is sent as
// {{secret_N}}. It asks the service to record (record.start) or waits for the service to ask.
import type { Browser, Frame, Page } from 'playwright-core';
import { runnerPageScript } from '../../recorder/bundle.js';
import { inFrame, type PageMessage, type RecordedStep, SecretNumbers, stepSummary } from '../../recorder/steps.js';
import { findChromium, launchChromium } from '../browser.js';
import { OtpClient, type Frame as OtpFrame } from './otp-client.js';

export interface RecorderOptions {
  /** The service's OTP address, e.g. ws://127.0.0.1:8081/otp. */
  server: string;
  /** An API key with scope write. */
  key: string;
  /** The start page: its navigate is the first step. */
  url?: string;
  title?: string;
  /** Executor name shown in GET /otp/sessions. */
  name?: string;
  /** Chromium executable; default: a system Chromium, else the one @sparticuz/chromium ships. */
  chromium?: string;
  headed?: boolean;
  /** Wait for the service to start a recording (POST /otp/sessions/:id/recordings) instead of asking. */
  wait?: boolean;
  log?: (line: string) => void;
}

export interface RecordingResult {
  recordingId: string;
  /** The test case the service made (absent when nothing was recorded). */
  testCaseId?: string;
  steps: number;
  reason: string;
}

export type { RecordedStep };

/** A navigation this soon after a recorded action is taken as its consequence, not a step of its own. */
const CAUSED_NAVIGATION_MS = 2_000;
export const RECORDER_VERSION = '0.1.0';

export class Recorder {
  recordingId?: string;
  /** Every step sent, in order. */
  readonly steps: RecordedStep[] = [];
  /** Resolves once a recording is under way and its page is open. */
  readonly started: Promise<void>;
  /** Resolves when the recording has stopped (whoever stopped it) and the browser is closed. */
  readonly done: Promise<RecordingResult>;
  private mainPage?: Page;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly acks = new Set<Promise<unknown>>();
  private readonly seen = new Map<string, number>();
  private readonly seenWaiters: Array<{ doc: string; seq: number; resolve: () => void }> = [];
  private readonly secrets = new SecretNumbers();
  private lastActionAt = 0;
  private ownNavigation = false;
  private stopping?: Promise<RecordingResult>;
  private resolveStarted!: () => void;
  private rejectStarted!: (err: Error) => void;
  private resolveDone!: (result: RecordingResult) => void;
  private result?: RecordingResult;

  private constructor(
    private readonly options: RecorderOptions,
    private readonly client: OtpClient,
    private readonly browser: Browser,
  ) {
    this.started = new Promise((resolve, reject) => {
      this.resolveStarted = resolve;
      this.rejectStarted = reject;
    });
    this.started.catch(() => {});
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    client.on((frame) => this.onFrame(frame));
    void client.closed.then(({ code, reason }) => {
      if (!this.result) this.log(`connection closed (${code} ${reason})`);
      this.rejectStarted(new Error(`connection closed (${code} ${reason})`));
      void this.close();
    });
    browser.on('disconnected', () => void this.stop('browser closed'));
  }

  static async start(options: RecorderOptions): Promise<Recorder> {
    const browser = await launchChromium((await findChromium(options.chromium)).path, Boolean(options.headed));
    let client: OtpClient;
    try {
      client = await OtpClient.connect(options.server, options.key, {
        name: options.name ?? 'otp-runner record',
        version: RECORDER_VERSION,
        // replay false: the service sends this session no runs.
        capabilities: {
          record: true,
          replay: false,
          screenshot: false,
          upload: false,
          crossOrigin: true,
          eval: false,
          maxParallel: 1,
        },
      });
    } catch (err) {
      await browser.close();
      throw err;
    }
    const recorder = new Recorder(options, client, browser);
    if (!options.wait) {
      const ask = client.send('record.start', {
        ...(options.title ? { title: options.title } : {}),
        ...(options.url ? { url: options.url } : {}),
      });
      // The answer is a record.start frame (handled in onFrame), or an error.
      client.reply(ask, 'record.start').catch((err) => recorder.rejectStarted(err));
    }
    try {
      await recorder.started;
    } catch (err) {
      await recorder.close();
      throw err;
    }
    return recorder;
  }

  get sessionId(): string {
    return this.client.sessionId!;
  }

  /** The recording's page (tests drive it with trusted input). */
  get page(): Page {
    return this.mainPage!;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private onFrame(frame: OtpFrame): void {
    if (frame.type === 'record.start' && !this.recordingId) {
      this.begin(frame.payload.recordingId, frame.payload.url ?? this.options.url).then(
        this.resolveStarted,
        this.rejectStarted,
      );
    } else if (frame.type === 'record.stop' && frame.payload?.recordingId === this.recordingId) {
      this.finish({
        recordingId: this.recordingId!,
        testCaseId: frame.payload.testCaseId,
        steps: this.steps.length,
        reason: frame.payload.reason ?? 'stopped',
      });
    } else if (frame.type === 'error' && !frame.ref) {
      this.log(`service: ${frame.payload?.code} ${frame.payload?.message}`);
    }
  }

  private async begin(recordingId: string, url: string | undefined): Promise<void> {
    this.recordingId = recordingId;
    // A headed browser shows the page at the size of its window.
    const context = await this.browser.newContext(this.options.headed ? { viewport: null } : {});
    await context.exposeBinding('__otpRecord', (source, message: PageMessage) => this.fromPage(source, message));
    await context.addInitScript({ content: await runnerPageScript() });
    const page = await context.newPage();
    this.mainPage = page;
    page.on('framenavigated', (frame) => this.navigated(frame));
    page.on('close', () => void this.stop('page closed'));
    if (url) {
      this.enqueue(async () => this.emit({ otp: { action: 'navigate', url } }, new Date().toISOString()));
      this.ownNavigation = true;
      try {
        await page.goto(url);
      } finally {
        this.ownNavigation = false;
      }
    }
  }

  private enqueue(work: () => Promise<void> | void): void {
    this.chain = this.chain.then(work).catch((err) => this.log(`could not record a step: ${(err as Error).message}`));
  }

  private fromPage(source: { page: Page; frame: Frame }, message: PageMessage): void {
    if (!this.recordingId || this.result || source.page !== this.mainPage) return;
    this.lastActionAt = Date.now();
    this.enqueue(async () => {
      const step = message.step;
      if (message.secret !== undefined) this.secrets.mask(step, source.frame.url(), message.secret);
      if (source.frame !== this.mainPage!.mainFrame()) {
        const frame = await frameSelector(source.frame);
        if (frame) inFrame(step, frame);
      }
      this.emit(step, message.at);
    });
    this.enqueue(() => this.saw(message.doc, message.seq));
  }

  private navigated(frame: Frame): void {
    if (frame !== this.mainPage?.mainFrame() || this.ownNavigation || this.result) return;
    const url = frame.url();
    if (!/^https?:/.test(url)) return;
    if (Date.now() - this.lastActionAt < CAUSED_NAVIGATION_MS) return;
    this.enqueue(() => this.emit({ otp: { action: 'navigate', url } }, new Date().toISOString()));
  }

  private emit(step: RecordedStep, at: string): void {
    const id = this.client.send('event.recorded', { recordingId: this.recordingId, step, at });
    this.steps.push(step);
    this.log(`step ${this.steps.length}: ${stepSummary(step)}`);
    const acked = this.client
      .reply(id, 'ack')
      .catch((err) => this.log(`step ${this.steps.length} was not stored: ${(err as Error).message}`));
    this.acks.add(acked);
    void acked.finally(() => this.acks.delete(acked));
  }

  private saw(doc: string, seq: number): void {
    this.seen.set(doc, Math.max(seq, this.seen.get(doc) ?? 0));
    for (let i = this.seenWaiters.length - 1; i >= 0; i--) {
      const w = this.seenWaiters[i]!;
      if ((this.seen.get(w.doc) ?? 0) >= w.seq) {
        this.seenWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /**
   * Sends what the pages still hold (text being typed, a select just changed) and resolves once every
   * step so far is stored by the service.
   */
  async settle(): Promise<void> {
    const frames = this.mainPage && !this.mainPage.isClosed() ? this.mainPage.frames() : [];
    const marks = await Promise.all(
      frames.map((f) =>
        f.evaluate(() => (globalThis as RecorderPage).__otpRecorderFlush?.() ?? null).catch(() => null),
      ),
    );
    await Promise.all(
      marks
        .filter((m): m is { doc: string; seq: number } => Boolean(m && m.seq > 0))
        .map((m) =>
          (this.seen.get(m.doc) ?? 0) >= m.seq
            ? undefined
            : new Promise<void>((resolve) => this.seenWaiters.push({ ...m, resolve })),
        ),
    );
    await this.chain;
    await Promise.all([...this.acks]);
  }

  /** Stops the recording: the service makes the test case and answers its id; the browser closes. */
  stop(reason = 'stopped'): Promise<RecordingResult> {
    this.stopping ??= (async () => {
      if (this.recordingId && !this.result) {
        await this.settle().catch(() => {});
        const ask = this.client.send('record.stop', { recordingId: this.recordingId });
        await Promise.race([
          this.done,
          this.client.reply(ask, 'record.stop').catch((err) => {
            this.log(`record.stop: ${(err as Error).message}`);
            this.finish({
              recordingId: this.recordingId!,
              steps: this.steps.length,
              reason: `${reason}; ${(err as Error).message}`,
            });
          }),
        ]);
      }
      await this.close();
      return this.done;
    })();
    return this.stopping;
  }

  private finish(result: RecordingResult): void {
    if (this.result) return;
    this.result = result;
    this.resolveDone(result);
    void this.close();
  }

  private async close(): Promise<void> {
    if (!this.result)
      this.finish({ recordingId: this.recordingId ?? '', steps: this.steps.length, reason: 'connection closed' });
    this.client.close();
    await this.browser.close().catch(() => {});
  }
}

/** Starts a recorder; see RecorderOptions. Resolves once the recording is under way. */
export function startRecorder(options: RecorderOptions): Promise<Recorder> {
  return Recorder.start(options);
}

/** What the recorder's page script (src/recorder/page/runner-entry.ts) installs in every frame. */
type RecorderPage = {
  __otpRecorderFlush?: () => { doc: string; seq: number } | null;
  __otpIframeSelector?: (el: Element) => string;
};

/** A selector of the iframe that holds `frame`, for the locator's `frame` member (the page script's rule). */
async function frameSelector(frame: Frame): Promise<string | undefined> {
  const element = await frame.frameElement().catch(() => undefined);
  if (!element) return undefined;
  // The iframe element lives in the parent frame, where the page script was installed too.
  const selector = await element.evaluate(
    (el) => (globalThis as RecorderPage).__otpIframeSelector?.(el as Element) ?? null,
  );
  return selector ?? undefined;
}
