// One run through the real runner in real headless Chromium that performs every action of spec 2.6,
// every assert kind with every op it takes (2.7), and every locator strategy with name, exact, nth,
// within, frame and candidates whose first misses. Each action leaves a mark in the page, which a
// later step reads back; the test checks each step's status and the `actual` it reported.
import { expect } from 'chai';
import { type RunnerHarness, servePages, startHarness, step } from './harness.js';
import { FRAME_PAGE, PLAN_PAGE, SECOND_PAGE } from './pages.js';

type Expectation = { actual?: string | RegExp; usedLocator?: unknown };

describe('otp-runner: every action, assert kind, op and locator strategy', function () {
  this.timeout(30_000);
  let h: RunnerHarness;
  let site: Awaited<ReturnType<typeof servePages>>;
  before(async () => {
    site = await servePages({ '/': PLAN_PAGE, '/frame': FRAME_PAGE, '/second': SECOND_PAGE });
    h = await startHarness({ allowEval: true });
  });
  after(async () => {
    await h?.stop();
    await site?.close();
  });

  async function uploadAsset(name: string, text: string): Promise<string> {
    await h.t.request('POST', '/assets/buckets', { key: h.key, body: { name: 'files' } });
    const form = new FormData();
    form.set('file', new Blob([text], { type: 'text/plain' }), name);
    const res = await fetch(`${h.t.api}/assets/buckets/files/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}` },
      body: form,
    });
    const body = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(body)).to.equal(201);
    return body.id;
  }

  it('performs the whole plan and reports each step with its actual value', async () => {
    const assetId = await uploadAsset('hello.txt', 'hello from an asset');
    const css = (value: string, extra: Record<string, unknown> = {}) => ({ by: 'css', value, ...extra });
    const text = (locator: unknown, op: string, expected: string) => ({
      action: 'assert',
      kind: 'text',
      locator,
      op,
      expected,
    });
    const log = (id: string, expected: string) => text(css(`#log-${id}`), 'equals', expected);
    const plan: Array<[Record<string, unknown>, Expectation?, Record<string, unknown>?]> = [
      // navigate (waitUntil) and the page asserts: url and title, each with equals, contains, matches
      [{ action: 'navigate', url: site.url('/'), waitUntil: 'domcontentloaded' }],
      [{ action: 'assert', kind: 'url', op: 'equals', expected: site.url('/') }, { actual: site.url('/') }],
      [{ action: 'assert', kind: 'url', op: 'contains', expected: '127.0.0.1' }],
      [{ action: 'assert', kind: 'url', op: 'matches', expected: '^http://127\\.0\\.0\\.1:\\d+/$' }],
      [{ action: 'assert', kind: 'title', expected: 'Runner plan' }, { actual: 'Runner plan' }],
      [{ action: 'assert', kind: 'title', op: 'contains', expected: 'plan' }],
      [{ action: 'assert', kind: 'title', op: 'matches', expected: '^Runner' }],
      // the nine strategies
      [text({ by: 'testid', value: 'heading' }, 'equals', 'Runner plan'), { actual: 'Runner plan' }],
      [{ action: 'click', locator: { by: 'role', value: 'button', name: 'Save', exact: true } }],
      [
        {
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Save', exact: true },
          expected: '1',
        },
        { actual: '1' },
      ],
      [
        {
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Save' },
          op: 'gt',
          expected: '1',
        },
        { actual: '2' },
      ],
      [{ action: 'type', locator: { by: 'label', value: 'Name' }, text: ' one' }],
      [
        { action: 'assert', kind: 'value', locator: { by: 'label', value: 'Name', exact: true }, expected: 'pre one' },
        { actual: 'pre one' },
      ],
      [{ action: 'type', locator: { by: 'placeholder', value: 'Your name' }, text: 'Grace', clear: true, delayMs: 5 }],
      [
        {
          action: 'assert',
          kind: 'value',
          locator: { by: 'placeholder', value: 'Your name' },
          op: 'contains',
          expected: 'rac',
        },
        { actual: 'Grace' },
      ],
      [
        { action: 'assert', kind: 'value', locator: css('#name'), op: 'matches', expected: '^G\\w+e$' },
        { actual: 'Grace' },
      ],
      [{ action: 'dblclick', locator: { by: 'text', value: 'Double me', exact: true } }],
      [log('dbl', 'double'), { actual: 'double' }],
      [{ action: 'assert', kind: 'visible', locator: { by: 'alt', value: 'Company logo' } }, { actual: 'visible' }],
      [
        {
          action: 'assert',
          kind: 'attribute',
          locator: { by: 'title', value: 'Status line' },
          attribute: 'data-state',
          expected: 'ready',
        },
        { actual: 'ready' },
      ],
      [
        {
          action: 'assert',
          kind: 'attribute',
          locator: css('#status'),
          attribute: 'title',
          op: 'contains',
          expected: 'line',
        },
        { actual: 'Status line' },
      ],
      [
        {
          action: 'assert',
          kind: 'attribute',
          locator: css('#status'),
          attribute: 'id',
          op: 'matches',
          expected: '^st',
        },
        { actual: 'status' },
      ],
      [{ action: 'rightClick', locator: { by: 'xpath', value: '//button[@id="ctx"]' } }],
      [log('ctx', 'right')],
      // text asserts normalise white space; equals, contains, matches
      [text(css('#status'), 'equals', 'All systems go'), { actual: 'All systems go' }],
      [text(css('#status'), 'contains', 'systems')],
      [text(css('#status'), 'matches', '^All\\s\\w+ go$')],
      // nth, within, frame, candidates whose first misses
      [text(css('li.item', { nth: 1 }), 'equals', 'two'), { actual: 'two' }],
      [{ action: 'assert', kind: 'count', locator: css('li.item'), op: 'lt', expected: '4' }, { actual: '3' }],
      [{ action: 'assert', kind: 'count', locator: css('li.item'), op: 'equals', expected: '3' }, { actual: '3' }],
      [{ action: 'click', locator: { by: 'role', value: 'button', name: 'Edit', within: css('#second') } }],
      [log('edit', 'second')],
      [{ action: 'click', locator: { by: 'text', value: 'Edit', nth: 0 } }],
      [log('edit', 'first')],
      [{ action: 'click', locator: { by: 'role', value: 'button', name: 'In frame', frame: '#app' } }],
      [text(css('#out', { frame: '#app' }), 'equals', 'framed'), { actual: 'framed' }],
      [
        { action: 'click', locator: { candidates: [{ by: 'testid', value: 'no-such-button' }, css('#save')] } },
        { usedLocator: css('#save') },
      ],
      [log('clicks', '2'), { actual: '2' }],
      // the other actions
      [{ action: 'click', locator: css('#mods'), modifiers: ['Shift', 'Alt'] }],
      [log('mods', 'altKey,shiftKey')],
      [{ action: 'press', locator: { by: 'placeholder', value: 'Keys here' }, key: 'Enter' }],
      [log('keys', 'Enter')],
      [{ action: 'press', key: 'x' }],
      [log('keys', 'x')],
      [{ action: 'select', locator: { by: 'label', value: 'Colour' }, by: 'value', value: 'g' }],
      [log('colour', 'g')],
      [{ action: 'select', locator: css('#colour'), by: 'label', value: 'Blue' }],
      [log('colour', 'b')],
      [{ action: 'select', locator: css('#colour'), by: 'index', value: 0 }],
      [{ action: 'assert', kind: 'value', locator: css('#colour'), expected: 'r' }, { actual: 'r' }],
      [{ action: 'check', locator: { by: 'label', value: 'Agree' } }],
      [{ action: 'assert', kind: 'checked', locator: css('#agree') }, { actual: 'checked' }],
      [{ action: 'uncheck', locator: { by: 'label', value: 'News' } }],
      [{ action: 'eval', script: 'document.getElementById("news").checked' }, { actual: 'false' }],
      [{ action: 'hover', locator: css('#hover') }],
      [log('hover', 'hovered')],
      [{ action: 'assert', kind: 'enabled', locator: css('#save') }, { actual: 'enabled' }],
      [{ action: 'assert', kind: 'disabled', locator: css('#off') }, { actual: 'disabled' }],
      [{ action: 'upload', locator: { by: 'label', value: 'Attachment' }, assetId }],
      [log('file', 'hello.txt:hello from an asset')],
      [{ action: 'scroll', locator: css('#box'), dy: 120 }],
      [{ action: 'eval', script: 'document.getElementById("box").scrollTop' }, { actual: '120' }],
      [{ action: 'scroll', dx: 0, dy: 400 }],
      [{ action: 'eval', script: 'window.scrollY' }, { actual: '400' }],
      [{ action: 'scroll', locator: css('#bottom'), into: true }],
      [{ action: 'eval', script: 'window.scrollY > 2000' }, { actual: 'true' }],
      // wait: ms, each locator state, networkidle
      [{ action: 'wait', ms: 20 }],
      [{ action: 'click', locator: css('#show') }],
      [{ action: 'wait', locator: css('#later'), state: 'visible' }],
      [{ action: 'assert', kind: 'visible', locator: css('#later') }, { actual: 'visible' }],
      [{ action: 'wait', locator: css('#later'), state: 'attached' }],
      [{ action: 'click', locator: css('#remove') }],
      [{ action: 'wait', locator: css('#gone'), state: 'detached' }],
      [{ action: 'wait', locator: css('#gone'), state: 'hidden' }],
      [{ action: 'assert', kind: 'hidden', locator: css('#gone') }, { actual: 'hidden' }],
      [{ action: 'wait', networkidle: true }],
      [{ action: 'screenshot', fullPage: true }],
      // navigations by link and with the other waitUntil values
      [{ action: 'click', locator: { by: 'role', value: 'link', name: 'Second page' } }],
      [{ action: 'assert', kind: 'title', expected: 'Second' }, { actual: 'Second' }],
      [{ action: 'navigate', url: site.url('/'), waitUntil: 'commit' }],
      [{ action: 'navigate', url: site.url('/second'), waitUntil: 'networkidle' }],
      [{ action: 'navigate', url: site.url('/'), waitUntil: 'load' }],
      [{ action: 'assert', kind: 'title', expected: 'Runner plan' }],
    ];
    const steps = plan.map(([otp, , extra]) => step(otp, { continueOnFail: true, evidence: 'never', ...extra }));
    const run = await h.run(steps);
    if (process.env.RUNNER_TIMES)
      console.log(run.steps.map((s: any, i: number) => `${i} ${plan[i]![0].action} ${s.durationMs}`).join('\n'));
    const problems = run.steps
      .map((s: any, i: number) =>
        s.status === 'pass'
          ? ''
          : `step ${i} ${JSON.stringify(plan[i]![0])}: ${s.status} ${JSON.stringify(s.error)} actual=${s.actual}`,
      )
      .filter(Boolean);
    expect(problems).to.deep.equal([]);
    expect(run.status).to.equal('passed');
    plan.forEach(([otp, want], i) => {
      const got = run.steps[i];
      if (want?.actual instanceof RegExp) expect(got.actual, `step ${i}`).to.match(want.actual);
      else if (want?.actual !== undefined) expect(got.actual, `step ${i} ${JSON.stringify(otp)}`).to.equal(want.actual);
      if (want?.usedLocator) expect(got.usedLocator, `step ${i}`).to.deep.equal(want.usedLocator);
      // actual is reported on every assert
      if (otp.action === 'assert') expect(got.actual, `step ${i} actual`).to.be.a('string');
    });
    // Every action of spec 2.6 and every assert kind of 2.7 is in the plan.
    expect(new Set(plan.map(([o]) => o.action)).size).to.equal(16);
    expect(new Set(plan.filter(([o]) => o.action === 'assert').map(([o]) => o.kind)).size).to.equal(11);
    expect(new Set(plan.filter(([o]) => o.action === 'assert').map(([o]) => o.op ?? 'equals'))).to.have.all.keys(
      'equals',
      'contains',
      'matches',
      'gt',
      'lt',
    );

    // The full-page screenshot went to the service as evidence and is taller than the viewport.
    const shot = run.steps[plan.findIndex(([o]) => o.action === 'screenshot')];
    expect(shot.evidence.screenshotAssetId).to.match(/^ast_/);
    const png = await (
      await fetch(`${h.t.service.restUrl}${shot.evidence.screenshotUrl}`, {
        headers: { authorization: `Bearer ${h.key}` },
      })
    ).arrayBuffer();
    const height = Buffer.from(png).readUInt32BE(20);
    expect(height).to.be.greaterThan(3000);
  });

  it('drives the demo page the service serves at /demo (README, Your first run)', async () => {
    const base = h.t.service.restUrl;
    const run = await h.run(
      [
        { otp: { action: 'navigate', url: '{{base}}/demo' } },
        { otp: { action: 'type', locator: { by: 'label', value: 'Your name' }, text: 'Ada' } },
        { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Greet' } } },
        {
          otp: {
            action: 'assert',
            kind: 'text',
            locator: { by: 'testid', value: 'greeting' },
            expected: 'Hello, Ada!',
          },
          timeoutMs: 5000,
        },
      ],
      { vars: { base } },
    );
    expect(run.status, JSON.stringify(run.steps.map((s: any) => s.error))).to.equal('passed');
    expect(run.steps[3].actual).to.equal('Hello, Ada!');
  });
});
