import { expect } from 'chai';
import { servePages, step } from '../runner/harness.js';
import { FRAME_PAGE, PLAN_PAGE } from '../runner/pages.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, launchExtension, runOn } from './harness.js';

describe('extension smoke', function () {
  this.timeout(60_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let site: Awaited<ReturnType<typeof servePages>>;
  let key: string;
  let projectId: string;
  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    site = await servePages({ '/': PLAN_PAGE, '/frame': FRAME_PAGE });
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key });
  });
  after(async () => {
    await ext?.close();
    await site?.close();
    await t?.stop();
  });
  it('runs', async () => {
    const sessionId = await ext.sessionId();
    const run = await runOn(t, key, projectId, sessionId, [
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'click', locator: { by: 'role', value: 'button', name: 'Save', exact: true } }),
      step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#log-clicks' }, expected: '1' }),
      step({ action: 'click', locator: { by: 'role', value: 'button', name: 'In frame', frame: '#app' } }),
      step({
        action: 'assert',
        kind: 'text',
        locator: { by: 'css', value: '#out', frame: '#app' },
        expected: 'framed',
      }),
    ]);
    console.log(JSON.stringify(run.steps.map((s: any) => [s.status, s.error, s.actual, s.durationMs])));
    expect(run.status).to.equal('passed');
  });
});
