// One conformance corpus (corpus.ts), run through the service against otp-runner and against the
// extension: for every step both must give the same status, code, actual, usedLocator and
// triedLocators (with their counts, visible and enabled), keep evidence alike, and give what the
// corpus says the step must give. A difference fails the test, naming the step. Real service, real
// otp-runner, real extension, real headless Chromium.
import { expect } from 'chai';
import { type Runner, startRunner } from '../../src/runner/index.js';
import { servePages } from '../runner/harness.js';
import { FRAME_PAGE, PLAN_PAGE, SECOND_PAGE } from '../runner/pages.js';
import { startTestService, type TestService } from '../support/service.js';
import { corpus } from './corpus.js';
import { NOISY_PAGE, ROLES_PAGE, SHADOW_PAGE } from './corpus-pages.js';
import { type ExtensionBrowser, launchExtension, runOn } from './harness.js';

/** What must be the same of a step on both executors. */
function comparable(step: any) {
  return {
    status: step.status,
    code: step.error?.code,
    actual: step.actual,
    usedLocator: step.usedLocator,
    triedLocators: step.triedLocators,
    errorTriedLocators: step.error?.triedLocators,
    screenshot: Boolean(step.evidence?.screenshotAssetId),
    consoleErrors: step.evidence?.consoleErrors,
    // The main document's navigations: where each went and the status it got (triage reads them).
    navigations: step.evidence?.navigations?.map((n: { url: string; status?: number }) => `${n.status} ${n.url}`),
  };
}

describe('the extension and otp-runner: one conformance corpus, the same answers', function () {
  this.timeout(180_000);
  let t: TestService;
  let runner: Runner;
  let ext: ExtensionBrowser;
  let site: Awaited<ReturnType<typeof servePages>>;
  let key: string;
  let projectId: string;
  let assetId: string;

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    site = await servePages({
      '/': PLAN_PAGE,
      '/frame': FRAME_PAGE,
      '/second': SECOND_PAGE,
      '/shadow': SHADOW_PAGE,
      '/roles': ROLES_PAGE,
      '/noisy': NOISY_PAGE,
    });
    runner = await startRunner({ server: t.otpUrl, key, allowEval: true });
    await runner.ready;
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key, allowEval: true });
    await t.request('POST', '/assets/buckets', { key, body: { name: 'files' } });
    const form = new FormData();
    form.set('file', new Blob(['hello from an asset'], { type: 'text/plain' }), 'hello.txt');
    const res = await fetch(`${t.api}/assets/buckets/files/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    assetId = ((await res.json()) as { id: string }).id;
  });
  after(async () => {
    await runner?.close();
    await ext?.close();
    await site?.close();
    await t?.stop();
  });

  it('every case of the corpus gives the same answer, step by step, on both executors', async () => {
    const extensionSession = await ext.sessionId();
    const runnerSession = runner.sessionId!;
    const differences: string[] = [];
    const wrong: string[] = [];
    let navigationsReported = 0;
    for (const c of corpus(site.url, assetId)) {
      const steps = c.steps.map((st) => ({
        otp: st.otp,
        timeoutMs: st.timeoutMs ?? 5000,
        continueOnFail: true,
        evidence: st.evidence ?? 'never',
      }));
      const body = c.body?.(site) ?? {};
      const byRunner = await runOn(t, key, projectId, runnerSession, steps, body);
      const byExtension = await runOn(t, key, projectId, extensionSession, steps, body);
      c.steps.forEach((st, i) => {
        const r = byRunner.steps[i];
        const e = byExtension.steps[i];
        const label = `${c.name}, step ${i} ${JSON.stringify(st.otp)}`;
        for (const [who, got] of [
          ['otp-runner', r],
          ['extension', e],
        ] as const) {
          const outcome = got.error?.code ?? got.status;
          if (outcome !== (st.want ?? 'pass'))
            wrong.push(`${label}: ${who} gave ${outcome} (${got.error?.message ?? ''})`);
        }
        if (e.evidence?.navigations?.length) navigationsReported++;
        const a = JSON.stringify(comparable(r));
        const b = JSON.stringify(comparable(e));
        if (a !== b) differences.push(`${label}:\n  otp-runner ${a}\n  extension  ${b}`);
      });
    }
    expect(wrong, 'what the corpus says each step gives').to.deep.equal([]);
    expect(differences, 'differences between the executors').to.deep.equal([]);
    expect(navigationsReported, 'steps whose navigations the extension reported').to.be.greaterThan(0);
  });
});
