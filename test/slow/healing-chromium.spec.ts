// Healing in a real browser: a page served by the test renames its button's test id (as products do
// between releases); otp-runner, driving headless Chromium, passes the step through the second
// candidate and reports what each matched; the service proposes the fix; accepted, the next run of
// the same test case passes through its first candidate.
import { expect } from 'chai';
import { type RunnerHarness, servePages, startHarness, step } from '../runner/harness.js';

const page = (testId: string) => `<!doctype html><html><body><main>
  <button data-testid="${testId}" onclick="document.getElementById('status').textContent = 'Saved'">Save</button>
  <button hidden>Save draft</button>
  <p id="status">Not saved</p></main></body></html>`;

describe('ai: an accepted healing proposal, in real Chromium', function () {
  this.timeout(60_000);
  let h: RunnerHarness;
  let site: Awaited<ReturnType<typeof servePages>>;
  before(async () => {
    // The product ships with the button's test id changed: save-v1 is gone, save-v2 is there.
    site = await servePages({ '/': page('save-v2') });
    h = await startHarness();
  });
  after(async () => {
    await h?.stop();
    await site?.close();
  });

  it('proposes the candidate that found one visible, enabled button, and after accepting it the next run passes through its first candidate', async () => {
    const req = (method: string, path: string, body?: unknown) => h.t.request(method, path, { key: h.key, body });
    const roleSave = { by: 'role', value: 'button', name: 'Save', exact: true };
    const steps = [
      step({ action: 'navigate', url: site.url('/') }),
      step(
        { action: 'click', locator: { candidates: [{ by: 'testid', value: 'save-v1' }, roleSave] } },
        { label: 'save' },
      ),
      step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#status' }, expected: 'Saved' }),
    ];
    const testCase = (await req('POST', '/tests/cases', { title: 'Save', steps })).body;
    // Every run.finished the runner hears, from before the first POST (none is missed).
    const finished = new Set<string>();
    let heard = () => {};
    h.runner.on('finished', (runId: string) => {
      finished.add(runId);
      heard();
    });
    const runOnce = async () => {
      const run = await req('POST', '/otp/runs', { testCaseIds: [testCase.id] });
      expect(run.status).to.equal(202);
      while (!finished.has(run.body.runId)) await new Promise<void>((resolve) => (heard = resolve));
      return (await req('GET', `/otp/runs/${run.body.runId}`)).body;
    };
    const first = await runOnce();
    expect(first.status).to.equal('passed');
    expect(first.steps[1].usedLocator).to.deep.equal(roleSave);
    expect(first.steps[1].triedLocators).to.deep.equal([
      { by: 'testid', value: 'save-v1', count: 0 },
      { ...roleSave, count: 1, visible: true, enabled: true },
    ]);

    const [proposal] = (await req('GET', '/ai/healing')).body.items;
    expect(proposal).to.deep.include({
      testCaseId: testCase.id,
      stepPosition: 1,
      oldLocator: { by: 'testid', value: 'save-v1' },
    });
    expect(proposal.newLocator).to.deep.equal(roleSave);
    expect(proposal.evidence.runs.map((r: { runId: string }) => r.runId)).to.deep.equal([first.id]);
    const accepted = await req('POST', `/ai/healing/${proposal.id}/accept`);
    expect(accepted.body).to.include({ status: 'accepted', newVersion: 2 });

    const second = await runOnce();
    expect(second.status).to.equal('passed');
    expect(second.testCases[0].version).to.equal(2);
    expect(second.steps[1].usedLocator).to.deep.equal(roleSave);
    // Through its first candidate now: nothing else was tried, and nothing new is proposed.
    expect(second.steps[1].triedLocators).to.equal(undefined);
    expect(second.steps[1].action.locator.candidates[0]).to.deep.equal(roleSave);
    expect((await req('GET', '/ai/healing')).body.items).to.deep.equal([]);
  });
});
