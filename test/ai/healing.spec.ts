// Healing proposals from what executors report: a step passed through its second candidate, which
// matched one visible, enabled element. Proposed with evidence, announced by webhook, accepted into a
// new version of the test case, or rejected and not proposed again for the same evidence.
import { expect } from 'chai';
import { ajv } from '../../src/validation/ajv.js';
import { webhookEvents } from '../../src/webhook-delivery/index.js';
import { type Frame, TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const oldLocator = { by: 'testid', value: 'save-v1' };
const newLocator = { by: 'role', value: 'button', name: 'Save' };
const hiddenLocator = { by: 'css', value: '#save' };
const fastDelivery = {
  retryScheduleMs: [100, 200],
  jitter: 0.2,
  attemptTimeoutMs: 10_000,
  pollMs: 200,
  disableAfterFailures: 3,
  disableAfterMs: 0,
};

describe('ai: healing proposals', () => {
  let t: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100, resumeWindowMs: 0 }, webhooks: fastDelivery });
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await t?.stop();
  });

  async function project() {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ maxParallel: 1 });
    const run = async (testCaseIds: string[], answer: (exec: Frame) => Record<string, unknown>) => {
      const created = await req('POST', '/otp/runs', { testCaseIds });
      const start = await executor.next('run.start');
      executor.send('ack', undefined, { runId: start.runId, ref: start.id });
      for (;;) {
        const frame = await Promise.race([
          executor.next('step.exec', (f) => f.runId === start.runId),
          executor.next('run.finished', (f) => f.runId === start.runId),
        ]);
        if (frame.type === 'run.finished') break;
        const { status, ...extra } = answer(frame);
        executor.result(frame, status as 'pass', extra);
      }
      return created.body.runId as string;
    };
    return { req, run };
  }

  it('proposes the candidate that matched one visible, enabled element, announces it, and accepting it makes a new version', async () => {
    const p = await project();
    const hook = await p.req('POST', '/webhooks', { url: receiver.url, events: ['healing.proposed'] });
    expect(hook.status).to.equal(201);
    const steps = [
      { otp: { action: 'navigate', url: 'https://app.test/' } },
      { otp: { action: 'click', locator: { candidates: [oldLocator, newLocator] } }, label: 'save' },
    ];
    const testCase = (await p.req('POST', '/tests/cases', { title: 'save', steps })).body;
    const tried = [
      { ...oldLocator, count: 0 },
      { ...newLocator, count: 1, visible: true, enabled: true },
    ];
    const runs: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      runs.push(
        await p.run([testCase.id], (exec) =>
          exec.payload.stepIndex === 1
            ? { status: 'pass', usedLocator: newLocator, triedLocators: tried }
            : { status: 'pass' },
        ),
      );
    }
    // A step that went through a candidate matching a hidden element proposes nothing.
    const other = (
      await p.req('POST', '/tests/cases', {
        title: 'hidden',
        steps: [{ otp: { action: 'click', locator: { candidates: [oldLocator, hiddenLocator] } } }],
      })
    ).body;
    await p.run([other.id], () => ({
      status: 'pass',
      usedLocator: hiddenLocator,
      triedLocators: [
        { ...oldLocator, count: 0 },
        { ...hiddenLocator, count: 1, visible: false, enabled: true },
      ],
    }));

    const listed = await p.req('GET', '/ai/healing');
    expect(listed.status).to.equal(200);
    expect(listed.body.items).to.have.length(1);
    const proposal = listed.body.items[0];
    expect(proposal).to.deep.include({
      testCaseId: testCase.id,
      caseVersion: 1,
      stepPosition: 1,
      oldLocator,
      newLocator,
      status: 'proposed',
    });
    expect(proposal.evidence.rule).to.equal('passed_through_other');
    expect(proposal.evidence.occurrences).to.equal(2);
    expect(proposal.evidence.runs.map((r: { runId: string }) => r.runId)).to.deep.equal([...runs].reverse());
    expect(proposal.evidence.counts).to.deep.equal([
      { locator: oldLocator, count: 0 },
      { locator: { by: 'role', name: 'Save', value: 'button' }, count: 1, visible: true, enabled: true },
    ]);

    const announced = await receiver.one(
      'healing.proposed',
      (r) => r.payload.type === 'healing.proposed' && r.payload.data.id === proposal.id,
    );
    const schema = webhookEvents.find((e) => e.type === 'healing.proposed')!;
    expect(ajv.getSchema(schema.schema)!(announced.payload)).to.equal(true);

    const accepted = await p.req('POST', `/ai/healing/${proposal.id}/accept`);
    expect(accepted.status).to.equal(200);
    expect(accepted.body).to.include({ status: 'accepted', newVersion: 2 });
    expect(accepted.body.decidedBy).to.match(/^key_/);
    const changed = (await p.req('GET', `/tests/cases/${testCase.id}`)).body;
    expect(changed.version).to.equal(2);
    expect(changed.steps[1].otp.locator.candidates).to.deep.equal([
      { by: 'role', name: 'Save', value: 'button' },
      oldLocator,
    ]);
    expect(changed.steps[0]).to.deep.equal(steps[0]);
    expect((await p.req('POST', `/ai/healing/${proposal.id}/accept`)).status).to.equal(409);
    // The same evidence is not proposed again (it is decided), and nothing is open.
    expect((await p.req('GET', '/ai/healing')).body.items).to.deep.equal([]);
  });

  it('remembers a refusal for the same evidence, and another project never sees the proposal', async () => {
    const p = await project();
    const testCase = (
      await p.req('POST', '/tests/cases', {
        title: 'x',
        steps: [{ otp: { action: 'click', locator: { candidates: [oldLocator, newLocator] } } }],
      })
    ).body;
    const answer = () => ({
      status: 'pass',
      usedLocator: newLocator,
      triedLocators: [
        { ...oldLocator, count: 0 },
        { ...newLocator, count: 1, visible: true, enabled: true },
      ],
    });
    await p.run([testCase.id], answer);
    const [proposal] = (await p.req('GET', '/ai/healing')).body.items;
    const stranger = await project();
    expect((await stranger.req('GET', '/ai/healing')).body.items).to.deep.equal([]);
    expect((await stranger.req('POST', `/ai/healing/${proposal.id}/reject`, {})).status).to.equal(404);
    const rejected = await p.req('POST', `/ai/healing/${proposal.id}/reject`, { reason: 'the old id comes back' });
    expect(rejected.body).to.include({ status: 'rejected', reason: 'the old id comes back' });
    await p.run([testCase.id], answer);
    expect((await p.req('GET', '/ai/healing')).body.items).to.deep.equal([]);
    const all = (await p.req('GET', '/ai/healing?status=rejected')).body.items;
    expect(all.map((x: { id: string }) => x.id)).to.deep.equal([proposal.id]);
    expect((await p.req('GET', `/tests/cases/${testCase.id}`)).body.version).to.equal(1);
  });

  it("proposes from a failed step's tried list when the first candidate matched nothing and another matched one", async () => {
    const p = await project();
    const testCase = (
      await p.req('POST', '/tests/cases', {
        title: 'y',
        steps: [{ otp: { action: 'click', locator: { candidates: [oldLocator, newLocator] } } }],
      })
    ).body;
    await p.run([testCase.id], () => ({
      status: 'error',
      error: {
        code: 'E_TIMEOUT',
        message: 'the element was found but the action did not complete in time',
        triedLocators: [
          { ...oldLocator, count: 0 },
          { ...newLocator, count: 1, visible: true, enabled: true },
        ],
      },
    }));
    const [proposal] = (await p.req('GET', '/ai/healing')).body.items;
    expect(proposal.evidence.rule).to.equal('first_matched_nothing');
    expect(proposal.newLocator).to.deep.equal({ by: 'role', name: 'Save', value: 'button' });
  });
});
