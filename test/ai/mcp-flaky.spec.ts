// svc_list_flaky: GET /ai/flaky through MCP, with the read tier, its annotations, and the same quota.
import { expect } from 'chai';
import { call, mcpClient } from '../agents/mcp-client.js';
import { startTestService, type TestService } from '../support/service.js';

describe('ai: the svc_list_flaky MCP tool', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ limits: { aiCallsPerMonth: 1 } });
  });
  after(async () => t?.stop());

  it('is a read tool taking the query of GET /ai/flaky, answers as the route does, and is charged to the same allowance', async () => {
    const { key } = await t.newProject('read');
    const client = await mcpClient(t.service.restUrl, key);
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((x) => x.name === 'svc_list_flaky')!;
      expect(tool.annotations).to.include({ readOnlyHint: true, destructiveHint: false });
      expect(tool.description).to.contain('Needs scope read');
      expect(Object.keys((tool.inputSchema as { properties: object }).properties)).to.have.members([
        'runs',
        'status',
        'testCaseId',
        'limit',
      ]);
      const answer = await call(client, 'svc_list_flaky', { runs: 10 });
      expect(answer.body).to.deep.include({ items: [], window: { runs: 10 } });
      const refused = await call(client, 'svc_list_flaky', {});
      expect(refused.body.error.code).to.equal('ai_quota_exceeded');
      expect((await t.request('GET', '/ai/flaky', { key })).status).to.equal(402);
    } finally {
      await client.close();
    }
  });
});
