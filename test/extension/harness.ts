// What the extension's tests share: the extension built into a temporary folder (once per process),
// Debian's Chromium loading it unpacked in a persistent context, its worker given the service's
// address and a key through chrome.storage.local (no UI), and runs started through the service on
// the extension's session. Real service, real extension, real headless Chromium; nothing mocked.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Worker } from 'playwright-core';
import { buildExtension } from '../../extension/build/build.js';
import type { TestService } from '../support/service.js';

let built: Promise<string> | undefined;

/** The unpacked extension, built once per test process into a temporary folder. */
export function extensionDir(): Promise<string> {
  built ??= buildExtension(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'otp-ext-')), 'extension'));
  return built;
}

export interface ExtensionBrowser {
  context: BrowserContext;
  /** The extension's service worker (looked up again after a restart: its old handle throws). */
  worker(): Promise<Worker>;
  /** The extension's session id once it is welcomed (after settings, a restart or a resume), other than `not`. */
  sessionId(not?: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchExtension(
  settings: Record<string, unknown>,
  options: { headless?: boolean } = {},
): Promise<ExtensionBrowser> {
  const ext = await extensionDir();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-ext-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: options.headless ?? true,
    viewport: null,
    args: [`--disable-extensions-except=${ext}`, `--load-extension=${ext}`, '--no-sandbox'],
  });
  const worker = async () => {
    const live = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://'));
    return live ?? context.waitForEvent('serviceworker');
  };
  await (await worker()).evaluate((s) => (globalThis as any).chrome.storage.local.set(s), settings);
  return {
    context,
    worker,
    sessionId: async (not?: string) =>
      (await worker()).evaluate((n) => (globalThis as any).otpExtension.welcomed(n), not),
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Creates a test case of these steps and runs it on the session; answers the finished run as REST shows it. */
export async function runOn(
  t: TestService,
  key: string,
  projectId: string,
  sessionId: string,
  steps: unknown[],
  body: Record<string, unknown> = {},
): Promise<any> {
  const { runId } = await startOn(t, key, sessionId, steps, body);
  return finished(t, key, projectId, runId);
}

export async function startOn(
  t: TestService,
  key: string,
  sessionId: string,
  steps: unknown[],
  body: Record<string, unknown> = {},
): Promise<{ runId: string }> {
  const testCase = await t.request('POST', '/tests/cases', { key, body: { title: 'extension test', steps } });
  if (testCase.status !== 201) throw new Error(`test case refused: ${JSON.stringify(testCase.body)}`);
  const run = await t.request('POST', '/otp/runs', {
    key,
    body: { testCaseIds: [testCase.body.id], sessionId, ...body },
  });
  if (run.status !== 202) throw new Error(`run refused: ${JSON.stringify(run.body)}`);
  return { runId: run.body.runId };
}

/** Waits for the run's verdict (the engine's own wait, no polling) and answers it as REST shows it. */
export async function finished(
  t: TestService,
  key: string,
  projectId: string,
  runId: string,
  ms = 120_000,
): Promise<any> {
  await t.service.engine.awaitVerdict(projectId, runId, ms);
  return (await t.request('GET', `/otp/runs/${runId}`, { key })).body;
}
