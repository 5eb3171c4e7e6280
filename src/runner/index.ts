// otp-runner as a library: startRunner() launches Chromium, connects to the service and performs
// the steps of every run it is given. The CLI (cli.ts), the tests, the benchmark and the recorder
// use it.
import os from 'node:os';
import type { Browser } from 'playwright-core';
import type { Capabilities, RunFinishedPayload, StepResultPayload } from '../otp/protocol/schemas/messages.js';
import { findChromium, launchChromium, RUNNER_SWITCHES } from './browser.js';
import type { RunnerOptions } from './options.js';
import { ServiceRest } from './service-rest.js';
import { OtpSession, type SessionOptions } from './session.js';

export type { RunnerOptions } from './options.js';
export type { InboundFrame } from './session.js';

export const RUNNER_VERSION = '0.1.0';

export interface StartOptions extends Partial<Omit<RunnerOptions, 'server' | 'key'>> {
  server: string;
  key: string;
  /** Capabilities to declare beyond the runner's own (the recorder declares record: true). */
  capabilities?: Partial<Capabilities>;
  /** Frames the runner does not handle itself (record.start, record.stop): true when handled. */
  onFrame?: SessionOptions['onFrame'];
  /** Reconnection backoff (tests shorten it). */
  backoff?: SessionOptions['backoff'];
}

export interface Runner {
  /** The current session's id: set on welcome, undefined while disconnected. */
  readonly sessionId: string | undefined;
  /** Resolves on the first welcome; rejects when the service refuses the runner for good. */
  readonly ready: Promise<void>;
  /** The browser all runs share (each run gets its own context). */
  readonly browser: Browser;
  /** The Chromium executable and where it was found. */
  readonly chromium: { path: string; source: 'option' | 'system' | 'npm' };
  /** Runs in flight. */
  readonly activeRuns: number;
  /** The connection's events: 'welcome', 'disconnect', 'step', 'result', 'finished', 'fatal' (see session.ts). */
  on(event: 'welcome', listener: (sessionId: string) => void): this;
  on(event: 'disconnect', listener: (code: number, reason: string) => void): this;
  on(event: 'step', listener: (runId: string, stepIndex: number) => void): this;
  on(event: 'result', listener: (runId: string, result: StepResultPayload) => void): this;
  on(event: 'finished', listener: (runId: string, result: RunFinishedPayload) => void): this;
  on(event: 'fatal', listener: (err: Error) => void): this;
  /** Removes a listener added with on(). */
  off<A extends unknown[]>(event: string, listener: (...args: A) => void): this;
  /** Sends a frame on the current session (for onFrame handlers and the recorder). */
  send(type: string, fields: { runId?: string; ref?: string }, payload?: unknown): void;
  /** Cuts the connection as a network failure would (the runner reconnects). */
  dropConnection(): void;
  close(): Promise<void>;
}

export async function startRunner(options: StartOptions): Promise<Runner> {
  const log = options.log ?? (() => undefined);
  const maxParallel = options.maxParallel ?? 1;
  const chromium = await findChromium(options.chromium);
  let browser = await launchChromium(chromium.path, options.headed, RUNNER_SWITCHES);
  let relaunching: Promise<Browser> | undefined;
  // A browser that crashed is launched again for the next run.
  const liveBrowser = async (): Promise<Browser> => {
    if (browser.isConnected()) return browser;
    relaunching ??= launchChromium(chromium.path, options.headed, RUNNER_SWITCHES).then((b) => {
      browser = b;
      relaunching = undefined;
      return b;
    });
    return relaunching;
  };
  let session: OtpSession;
  const rest = new ServiceRest(() => options.api ?? session.apiUrl, options.key);
  session = new OtpSession({
    server: options.server,
    key: options.key,
    hello: {
      executor: 'runner',
      name: options.name ?? `otp-runner@${os.hostname()}`,
      version: RUNNER_VERSION,
      ...(options.project ? { projectId: options.project } : {}),
      capabilities: {
        record: false,
        replay: true,
        screenshot: true,
        upload: true,
        crossOrigin: true,
        eval: options.allowEval ?? false,
        maxParallel,
        ...options.capabilities,
      },
    },
    runDeps: { browser: liveBrowser, rest, allowEval: options.allowEval ?? false, log },
    log,
    onFrame: options.onFrame,
    backoff: options.backoff,
  });
  const ready = new Promise<void>((resolve, reject) => {
    session.once('welcome', () => resolve());
    session.once('fatal', reject);
  });
  // A caller that never awaits ready must not crash the process on a refused key.
  ready.catch(() => undefined);
  session.on('welcome', (id: string) =>
    log(`session ${id}: ready (${maxParallel} at once, Chromium ${chromium.path})`),
  );
  session.on('fatal', (err: Error) => log(`stopped: ${err.message}`));
  session.connect();

  let closing: Promise<void> | undefined;
  const runner: Runner = {
    get sessionId() {
      return session.sessionId;
    },
    ready,
    get browser() {
      return browser;
    },
    chromium,
    get activeRuns() {
      return session.runCount;
    },
    on<A extends unknown[]>(event: string, listener: (...args: A) => void) {
      session.on(event, listener);
      return runner;
    },
    off<A extends unknown[]>(event: string, listener: (...args: A) => void) {
      session.off(event, listener);
      return runner;
    },
    send: (type, fields, payload) => session.send(type, fields, payload),
    dropConnection: () => session.drop(),
    close: () =>
      (closing ??= (async () => {
        await session.stop();
        await browser.close().catch(() => undefined);
      })()),
  };
  return runner;
}
