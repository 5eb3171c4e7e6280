// The console's routes (three @koa/router routers in front of the REST app): what each kind of path
// answers, with and without a key, and what falls through to the REST app's 404.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

describe('Console routes', () => {
  let t: TestService;
  let readKey: string;
  const get = (path: string, init: RequestInit = {}) =>
    fetch(`${t.service.restUrl}${path}`, { redirect: 'manual', ...init });
  const withKey = (key: string, init: RequestInit = {}) => ({ ...init, headers: { authorization: `Bearer ${key}` } });

  before(async () => {
    t = await startTestService();
    readKey = await t.newKey('read');
  });
  after(async () => t?.stop());

  it('redirects / and /console to the runs page, and serves page shells to anyone (GET and HEAD)', async () => {
    for (const path of ['/', '/console', '/console/']) {
      const res = await get(path);
      expect(res.status, path).to.equal(302);
      expect(res.headers.get('location')).to.equal('/console/runs');
    }
    const shell = await get('/console/runs/otr_abc123');
    expect(shell.status).to.equal(200);
    expect(shell.headers.get('content-type')).to.contain('text/html');
    expect(shell.headers.get('content-security-policy')).to.contain("default-src 'none'");
    expect(await shell.text()).to.contain('/console/f/runs/otr_abc123');
    const head = await get('/console/sessions', { method: 'HEAD' });
    expect(head.status).to.equal(200);
  });

  it('passes a path whose id is not of its kind, or that no router knows, on to the REST 404', async () => {
    for (const path of [
      '/console/runs/ots_wrongkind',
      '/console/cases/tc_x/history/nope',
      '/console/nothing-here',
      '/console/static/missing.js',
      '/console/f/runs/not-a-run',
    ]) {
      const res = await get(path, withKey(t.adminKey));
      expect(res.status, path).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code, path).to.equal('NOT_FOUND');
    }
  });

  it('starts a run from the form with its queue group and priority, and refuses a priority it does not know', async () => {
    const testCase = await t.request('POST', '/tests/cases', {
      body: { title: 'form', steps: [{ otp: { action: 'click', locator: { by: 'css', value: '#go' } } }] },
    });
    const post = (form: Record<string, string>) =>
      get('/console/f/runs', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    const started = await post({ what: testCase.body.id, priority: 'gate', group: ' nightly ' });
    const runId = started.headers.get('hx-redirect')?.split('/').pop();
    expect(runId, await started.text()).to.match(/^otr_/);
    expect((await t.request('GET', `/otp/runs/${runId}`)).body).to.include({ group: 'nightly', priority: 'gate' });
    const plain = await post({ what: testCase.body.id, priority: 'normal', group: '' });
    const plainId = plain.headers.get('hx-redirect')?.split('/').pop();
    expect((await t.request('GET', `/otp/runs/${plainId}`)).body).to.include({ priority: 'normal' });
    const refused = await post({ what: testCase.body.id, priority: 'urgent' });
    expect(refused.headers.get('x-console-error')).to.match(/^400 /);
    expect(await refused.text()).to.contain('Priority is one of gate, normal, batch');
    const form = await (await get('/console/f/runs-controls', withKey(t.adminKey))).text();
    expect(form).to.contain('name="priority"').and.to.contain('name="group"');
  });

  it('answers fragments only with a key, and refuses a change to a read key inside the page', async () => {
    const anonymous = await get('/console/f/runs');
    expect(anonymous.status).to.equal(401);
    const whoami = await get('/console/f/whoami', withKey(readKey));
    expect(whoami.headers.get('content-type')).to.contain('text/plain');
    expect(await whoami.text()).to.match(/^prj_\w+ · read$/);
    const refused = await get('/console/f/runs/otr_abc123/cancel', withKey(readKey, { method: 'POST' }));
    expect(refused.status).to.equal(200);
    expect(refused.headers.get('x-console-error')).to.equal('403 FORBIDDEN');
    const missing = await get('/console/f/runs/otr_abc123', withKey(t.adminKey));
    expect(missing.status).to.equal(200);
    expect(missing.headers.get('x-console-error')).to.match(/^404 /);
  });
});
