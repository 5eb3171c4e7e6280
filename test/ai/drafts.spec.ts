// Drafts by a model: the real `openai` client against a local OpenAI-compatible server.
import { expect } from 'chai';
import { AI_COSTS } from '../../src/tiers.js';
import { OpenAiCompatibleServer } from '../support/openai-server.js';
import { startTestService, type TestService } from '../support/service.js';

const valid = {
  title: 'Sign in with a valid password',
  steps: [
    { label: 'open', otp: { action: 'navigate', url: 'https://app.test/login' } },
    { otp: { action: 'type', locator: { by: 'label', value: 'Email' }, text: '{{user}}' } },
    { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Sign in' } } },
  ],
};

describe('ai: drafts of test cases by a model', () => {
  let t: TestService;
  let model: OpenAiCompatibleServer;
  before(async () => {
    model = await OpenAiCompatibleServer.start();
    t = await startTestService({
      ai: {
        quarantineDays: 14,
        model: { baseUrl: model.baseUrl, apiKey: 'sk-test', model: 'tiny-test', timeoutMs: 10_000 },
      },
      limits: { aiCallsPerMonth: 25 },
    });
  });
  after(async () => {
    await t?.stop();
    await model?.close();
  });

  async function requirement(req: (m: string, p: string, b?: unknown) => Promise<{ status: number; body: any }>) {
    const created = await req('POST', '/requirements', {
      title: 'Users sign in',
      acceptanceCriteria: ['a valid password signs in', 'a wrong one is refused'],
    });
    expect(created.status).to.equal(201);
    return created.body.id as string;
  }

  it('drafts from the requirement with structured output, saves it as a draft that covers the requirement', async () => {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const requirementId = await requirement(req);
    model.answers.push(JSON.stringify(valid));
    const answer = await req('POST', '/ai/test-cases/draft', { requirementId, save: true });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.include({ requirementId, model: 'tiny-test', attempts: 1 });
    expect(answer.body.draft).to.deep.equal(valid);
    const sent = model.requests.at(-1)!;
    expect(sent.authorization).to.equal('Bearer sk-test');
    expect(sent.body.model).to.equal('tiny-test');
    expect(sent.body.response_format?.type).to.equal('json_schema');
    expect(sent.body.messages.at(-1)!.content).to.include('a wrong one is refused');
    const saved = (await req('GET', `/tests/cases/${answer.body.testCase.id}`)).body;
    expect(saved).to.include({ title: valid.title, status: 'draft' });
    const links = (await req('GET', `/tests/cases/${saved.id}/links`)).body.items;
    expect(links.map((l: any) => [l.relation, l.direction, l.artifact.id])).to.deep.equal([
      ['covers', 'outgoing', requirementId],
    ]);
    expect((await req('GET', '/ai/usage')).body.byOperation).to.deep.equal({ test_case_draft: AI_COSTS.model });
  });

  it('sends an invalid answer back once with its problems, and gives up with 502 after a second', async () => {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const requirementId = await requirement(req);
    const bad = { title: 'x', steps: [{ otp: { action: 'click' } }] };
    model.answers.push(JSON.stringify(bad), JSON.stringify(valid));
    const before = model.requests.length;
    const retried = await req('POST', '/ai/test-cases/draft', { requirementId });
    expect(retried.status).to.equal(200);
    expect(retried.body.attempts).to.equal(2);
    expect(retried.body.testCase).to.equal(null);
    const second = model.requests[before + 1]!;
    expect(second.body.messages.at(-1)!.content).to.match(/invalid: draft\.steps\/0|invalid: draft\.steps\[0\]/);
    model.answers.push('not json', JSON.stringify(bad));
    const failed = await req('POST', '/ai/test-cases/draft', { requirementId, save: true });
    expect(failed.status).to.equal(502);
    expect(failed.body.error.code).to.equal('ai_provider_failed');
    expect((await req('GET', '/tests/cases')).body.items).to.deep.equal([]);
  });

  it('answers 402 past the allowance before asking the model, writing nothing', async () => {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const requirementId = await requirement(req);
    // An unknown requirement is a 404 that costs nothing and asks no model.
    const asking = model.requests.length;
    expect((await req('POST', '/ai/test-cases/draft', { requirementId: 'req_nothing' })).status).to.equal(404);
    expect(model.requests.length).to.equal(asking);
    expect((await req('GET', '/ai/usage')).body.used).to.equal(0);
    model.answers.push(JSON.stringify(valid), JSON.stringify(valid));
    expect((await req('POST', '/ai/test-cases/draft', { requirementId })).status).to.equal(200);
    expect((await req('POST', '/ai/test-cases/draft', { requirementId })).status).to.equal(200);
    const asked = model.requests.length;
    const refused = await req('POST', '/ai/test-cases/draft', { requirementId, save: true });
    expect(refused.status).to.equal(402);
    expect(refused.body.error.code).to.equal('ai_quota_exceeded');
    expect(model.requests.length).to.equal(asked);
    expect((await req('GET', '/ai/usage')).body.used).to.equal(2 * AI_COSTS.model);
    model.answers.length = 0;
  });
});
