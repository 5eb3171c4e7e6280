// POST /otp/recordings: a finished recording, in this service's format or as Chrome DevTools Recorder
// JSON (as the JSON and as the file @puppeteer/replay writes, source-map line and all), becomes a test case.

import fs from 'node:fs';
import path from 'node:path';
import { JSONStringifyExtension, parse, stringify } from '@puppeteer/replay';
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

const chrome = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures/chrome-login.json'), 'utf8'));

const email = [
  { by: 'text', value: 'Email', exact: true },
  { by: 'css', value: '#email' },
  { by: 'xpath', value: '//*[@id="email"]' },
  { by: 'css', value: '#email' },
];
const password = [
  { by: 'text', value: 'Password', exact: true },
  { by: 'css', value: '#password' },
  { by: 'xpath', value: '//*[@id="password"]' },
  { by: 'css', value: '#password' },
];
const submit = [
  { by: 'role', value: 'button', name: 'Sign in', exact: true },
  { by: 'css', value: '[data-testid="submit"]' },
  { by: 'xpath', value: '//*[@data-testid="submit"]' },
  { by: 'css', value: '[data-testid="submit"]' },
  { by: 'text', value: 'Sign in' },
];
const expectedSteps = [
  { otp: { action: 'navigate', url: 'http://127.0.0.1:4000/login' } },
  { otp: { action: 'assert', kind: 'url', op: 'equals', expected: 'http://127.0.0.1:4000/login' } },
  { otp: { action: 'assert', kind: 'title', op: 'equals', expected: 'Sign in' } },
  { otp: { action: 'click', locator: { candidates: email } } },
  { otp: { action: 'type', locator: { candidates: email }, text: 'ada@example.com', clear: true } },
  { otp: { action: 'press', key: 'Tab' } },
  { otp: { action: 'type', locator: { candidates: password }, text: 'correct horse', clear: true } },
  { otp: { action: 'click', locator: { candidates: submit } } },
  { otp: { action: 'assert', kind: 'url', op: 'equals', expected: 'http://127.0.0.1:4000/welcome' } },
  { otp: { action: 'assert', kind: 'title', op: 'equals', expected: 'Welcome' } },
  { otp: { action: 'assert', kind: 'count', locator: { by: 'css', value: 'h1' }, op: 'equals', expected: '1' } },
];

describe('Recordings: POST /otp/recordings', function () {
  this.timeout(20_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });
  after(async () => svc?.stop());

  it("takes this service's own format and answers the test case", async () => {
    const steps = [
      { otp: { action: 'navigate', url: 'http://127.0.0.1:4000/' }, label: 'Open' },
      {
        otp: {
          action: 'type',
          locator: {
            candidates: [
              { by: 'testid', value: 'pw' },
              { by: 'label', value: 'Password' },
            ],
          },
          text: '{{secret_1}}',
        },
      },
    ];
    const res = await svc.request('POST', '/otp/recordings', {
      body: { format: 'otp', title: 'Own format', startUrl: 'http://127.0.0.1:4000/', steps },
    });
    expect(res.status).to.equal(201);
    expect(res.body.id).to.match(/^tc_/);
    expect(res.body).to.include({
      title: 'Own format',
      description: 'Imported recording. Recorded from http://127.0.0.1:4000/.',
    });
    expect(res.body.steps).to.deep.equal(steps);
    expect(res.body.labels).to.deep.equal(['recorded']);
    const read = await svc.request('GET', `/tests/cases/${res.body.id}`);
    expect(read.body.steps).to.deep.equal(steps);
  });

  it('takes Chrome DevTools Recorder JSON and maps each step, naming what it left out', async () => {
    const res = await svc.request('POST', '/otp/recordings', { body: chrome });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.title).to.equal('Sign in to the demo');
    expect(res.body.steps).to.deep.equal(expectedSteps);
    expect(res.body.description).to.equal(
      'Imported from a Chrome DevTools Recorder recording. Steps with no OTP equivalent were left out: setViewport ×1, keyUp ×1.',
    );
  });

  it('takes the file @puppeteer/replay writes, with its //# recorderSourceMap= line, as text/plain', async () => {
    const text = await stringify(parse(chrome), { extension: new JSONStringifyExtension() });
    expect(text).to.contain('//# recorderSourceMap=');
    // The test client sends JSON; the file goes as it is.
    const post = (body: string) =>
      fetch(`${svc.api}/otp/recordings`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'text/plain' },
      });
    const res = await post(text);
    const created = await res.json();
    expect(res.status, JSON.stringify(created)).to.equal(201);
    expect(created.steps).to.have.length(expectedSteps.length);
    const notJson = await post('{"title": "x", steps: [');
    expect(notJson.status).to.equal(400);
    expect((await notJson.json()).error.message).to.contain('not JSON');
  });

  it('refuses recordings it cannot read, saying where', async () => {
    const noSelectors = { title: 'Bad', steps: [{ type: 'click', offsetX: 1, offsetY: 1 }] };
    const bad = await svc.request('POST', '/otp/recordings', { body: noSelectors });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.contain('Not a Chrome DevTools Recorder recording');

    const onlyViewport = await svc.request('POST', '/otp/recordings', {
      body: { title: 'Nothing', steps: [chrome.steps[0]] },
    });
    expect(onlyViewport.status).to.equal(400);
    expect(onlyViewport.body.error.details.fields[0].message).to.contain('setViewport');

    const badOwn = await svc.request('POST', '/otp/recordings', {
      body: { title: 'Bad own', steps: [{ otp: { action: 'tap' } }] },
    });
    expect(badOwn.status).to.equal(400);
    expect(badOwn.body.error.details.fields.map((f: any) => f.field)).to.include('body.steps[0].otp.action');

    const readOnly = await svc.newKey('read');
    expect((await svc.request('POST', '/otp/recordings', { key: readOnly, body: chrome })).status).to.equal(403);
  });
});
