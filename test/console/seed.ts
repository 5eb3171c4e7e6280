// Data for the console's browser tests and screenshots: test cases written as a person would, an
// executor that answers steps on demand, evidence uploaded the way executors upload it.

import { type Frame, TestExecutor } from '../support/executor.js';
import type { TestService } from '../support/service.js';

export const SIGN_IN_STEPS = [
  { otp: { action: 'navigate', url: '{{base}}/login' }, label: 'Open the login page' },
  { otp: { action: 'type', locator: { by: 'label', value: 'Email' }, text: '{{user}}' } },
  { otp: { action: 'type', locator: { by: 'label', value: 'Password' }, text: '{{secret_1}}' } },
  {
    otp: {
      action: 'click',
      locator: {
        candidates: [
          { by: 'testid', value: 'login' },
          { by: 'role', value: 'button', name: 'Sign in' },
        ],
      },
    },
  },
  {
    otp: {
      action: 'assert',
      kind: 'text',
      locator: { by: 'role', value: 'heading' },
      op: 'contains',
      expected: 'Welcome',
    },
  },
];

export const CHECKOUT_STEPS = [
  { otp: { action: 'navigate', url: 'https://shop.test/cart' } },
  { otp: { action: 'select', locator: { by: 'label', value: 'Shipping' }, by: 'label', value: 'Express' } },
  { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Pay now' } } },
  { otp: { action: 'assert', kind: 'url', op: 'contains', expected: '/thanks' } },
];

export interface Project {
  key: string;
  projectId: string;
  req(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  testCase(title: string, steps: unknown[]): Promise<string>;
  executor(name?: string, capabilities?: Record<string, unknown>): Promise<TestExecutor>;
  /** Uploads evidence for a step as an executor does (POST /otp/evidence); answers the asset id. */
  evidence(runId: string, stepIndex: number, bytes: Buffer, name?: string): Promise<string>;
}

export async function newProject(t: TestService): Promise<Project> {
  const { key, projectId } = await t.newProject('admin');
  const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
  return {
    key,
    projectId,
    req,
    testCase: async (title, steps) => {
      const res = await req('POST', '/tests/cases', { title, steps });
      if (res.status !== 201) throw new Error(`test case: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id;
    },
    executor: async (
      name = 'laptop-chromium',
      capabilities = { screenshot: true, upload: true, eval: false, maxParallel: 2 },
    ) => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      await e.hello(capabilities, { name });
      return e;
    },
    evidence: async (runId, stepIndex, bytes, name = `step-${stepIndex}.png`) => {
      const form = new FormData();
      form.set('runId', runId);
      form.set('stepIndex', String(stepIndex));
      form.set('kind', 'screenshot');
      form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), name);
      const res = await fetch(`${t.api}/otp/evidence`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`evidence: ${res.status} ${JSON.stringify(body)}`);
      return body.assetId;
    },
  };
}

/** Answers every ping as a real executor does (a service with a short keepalive closes one that does not). */
export function answerPings<E extends TestExecutor>(e: E): E {
  e.ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    if (frame.type === 'ping') e.send('pong', undefined, { ref: frame.id });
  });
  return e;
}

/** The failure a step reports when its element is not found, with what was tried and what the page logged. */
export function notFound(exec: Frame, screenshotAssetId?: string) {
  return {
    durationMs: 2150,
    error: {
      code: 'E_LOCATOR_NOT_FOUND',
      message: 'No element matched the button named "Pay now" within 2000 ms',
      triedLocators: [
        { by: 'role', value: 'button', name: 'Pay now' },
        { by: 'text', value: 'Pay now', exact: true },
      ],
    },
    evidence: {
      consoleErrors: ["TypeError: Cannot read properties of undefined (reading 'total')"],
      ...(screenshotAssetId ? { screenshotAssetId } : {}),
    },
    actual: exec.payload.step.action === 'assert' ? '/cart' : undefined,
  };
}
