// Release readiness over REST, MCP, webhooks: a Playwright JUnit report imported into a test run of the
// release shows up in its readiness, which moves from blocked to ready as the blocking bug is fixed
// and the failing case passes; thresholds per project; suspect links; /openapi.json lists it all.

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { call, mcpClient } from '../agents/mcp-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const playwright = fs.readFileSync(
  path.join(import.meta.dirname, '..', 'reports', 'fixtures', 'playwright.xml'),
  'utf8',
);
const FAILURE = /<failure message="checkout\.spec\.ts:24:5 shows the basket total"[\s\S]*?<\/failure>/;

describe('Release readiness', () => {
  let t: TestService;
  let key: string;
  let receiver: WebhookReceiver;
  before(async () => {
    t = await startTestService();
    ({ key } = await t.newProject('admin'));
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await t?.stop();
  });

  const api = (method: string, url: string, body?: unknown) =>
    t.request(method, url, { key, ...(body !== undefined ? { body } : {}) });
  const post = async (url: string, body: unknown) => {
    const res = await api('POST', url, body);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const readiness = async (releaseId: string) => {
    const res = await api('GET', `/releases/${releaseId}/readiness`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const rule = (r: any, id: string) => r.rules.find((x: any) => x.id === id);
  const importReport = (runId: string, xml: string) =>
    t.request('POST', `/tests/runs/${runId}/results/import`, {
      key,
      body: xml,
      headers: { 'content-type': 'application/xml' },
    });

  it('shows an imported Playwright report, and moves from blocked to ready as the bug is fixed and the failing case passes', async () => {
    const release = await post('/releases', { name: '2.3.0', status: 'in_progress' });
    const requirement = await post('/requirements', {
      title: 'The basket shows its total',
      acceptanceCriteria: ['total includes tax'],
    });
    await post(`/requirements/${requirement.id}/links`, { targetId: release.id, relation: 'planned_for' });
    const basket = await post('/tests/cases', { title: 'Basket total', steps: [] });
    await post(`/tests/cases/${basket.id}/links`, { targetId: requirement.id, relation: 'covers' });
    const run = await post('/tests/runs', { title: '2.3.0 e2e', releaseId: release.id });
    await post('/webhooks', { url: receiver.url, events: ['release.readiness_changed'] });

    // Nothing ran: the requirement is covered but its case never ran, nothing has a result.
    const first = await readiness(release.id);
    expect(first).to.include({ releaseName: '2.3.0', verdict: 'at_risk', previousVerdict: null });
    expect(first.rules.map((r: any) => [r.id, r.status])).to.deep.equal([
      ['requirements_covered', 'passed'],
      ['requirements_passing', 'failed'],
      ['pass_rate', 'undefined'],
      ['open_bugs', 'undefined'],
      ['flaky_cases', 'undefined'],
      ['new_failures', 'undefined'],
      ['suspect_coverage', 'passed'],
    ]);
    expect(rule(first, 'requirements_passing').records).to.deep.equal([
      {
        id: requirement.id,
        kind: 'requirement',
        title: 'The basket shows its total',
        reason: 'never_ran',
        testCaseId: basket.id,
      },
    ]);

    // The Playwright report: the basket test (named with its case id) failed.
    const failing = playwright.replace(
      'checkout › shows the basket total',
      `checkout › shows the basket total [${basket.id}]`,
    );
    const imported = await importReport(run.id, failing);
    expect(imported.status).to.equal(201);
    expect(imported.body.matched).to.deep.equal({ byId: 1, byMapping: 0, newDraft: 3 });
    const failedResult = (await api('GET', `/tests/results?importId=${imported.body.importId}&testCaseId=${basket.id}`))
      .body.items[0];
    expect(failedResult.status).to.equal('failed');
    // Imported results count for coverage like any other.
    const coverage = (await api('GET', `/requirements/${requirement.id}/coverage`)).body;
    expect(coverage.testCases[0].latestResult).to.include({ id: failedResult.id, status: 'failed', testRunId: run.id });
    // Read as the import left it: the basket's failure is new since the last readiness (at_risk). (Read
    // now, not after the bug below: the project's subscription has each change recomputed in the
    // background, and "new" is judged against the state kept before the current one.)
    const afterImport = await readiness(release.id);
    expect(afterImport).to.include({ verdict: 'blocked', previousVerdict: 'at_risk' });
    expect(rule(afterImport, 'new_failures')).to.deep.include({ status: 'failed', effect: 'risks' });
    expect(rule(afterImport, 'new_failures').records.map((r: any) => r.id)).to.deep.equal([basket.id]);
    const bug = await post('/bugs', { title: 'Basket total misses tax', severity: 'critical' });
    await post(`/bugs/${bug.id}/links`, { targetId: failedResult.id, relation: 'found_by' });

    const blocked = await readiness(release.id);
    expect(blocked).to.include({ verdict: 'blocked', previousVerdict: 'at_risk' });
    expect(blocked.scope).to.deep.include({ requirementIds: [requirement.id], testRunIds: [run.id], testCases: 4 });
    expect(rule(blocked, 'requirements_passing')).to.deep.include({ status: 'failed', effect: 'blocks' });
    expect(rule(blocked, 'requirements_passing').records[0]).to.include({
      reason: 'last_failed',
      testCaseId: basket.id,
      resultId: failedResult.id,
    });
    expect(rule(blocked, 'pass_rate')).to.deep.include({ status: 'failed', effect: 'blocks', measured: 2 / 3 });
    expect(rule(blocked, 'open_bugs')).to.deep.include({
      status: 'failed',
      effect: 'blocks',
      summary: 'Open: 1 critical',
    });
    expect(rule(blocked, 'open_bugs').records).to.deep.equal([
      {
        id: bug.id,
        kind: 'bug',
        title: 'Basket total misses tax',
        reason: 'open_bug',
        status: 'open',
        severity: 'critical',
      },
    ]);
    // The bug changed the state; the basket's failure, kept before it, is no longer new.
    expect(rule(blocked, 'new_failures')).to.deep.include({ status: 'passed' });
    // Asked again with nothing changed: the same state, judged against the same previous one.
    expect((await readiness(release.id)).computedAt).to.equal(blocked.computedAt);

    // The fix: the bug is fixed in 2.3.0 and resolved; the report run again passes.
    await post(`/bugs/${bug.id}/links`, { targetId: release.id, relation: 'fixed_in' });
    expect((await api('PATCH', `/bugs/${bug.id}`, { status: 'resolved' })).status).to.equal(200);
    const stillBlocked = await readiness(release.id);
    expect(rule(stillBlocked, 'open_bugs').status).to.equal('passed');
    expect(stillBlocked.verdict).to.equal('blocked');
    const passing = await importReport(run.id, failing.replace(FAILURE, ''));
    expect(passing.body.matched).to.deep.equal({ byId: 1, byMapping: 3, newDraft: 0 });
    const ready = await readiness(release.id);
    expect(ready).to.include({ verdict: 'ready', previousVerdict: 'blocked' });
    expect(ready.rules.map((r: any) => [r.id, r.status])).to.deep.equal([
      ['requirements_covered', 'passed'],
      ['requirements_passing', 'passed'],
      ['pass_rate', 'passed'],
      ['open_bugs', 'passed'],
      ['flaky_cases', 'undefined'],
      ['new_failures', 'passed'],
      ['suspect_coverage', 'passed'],
    ]);

    // The webhook told each change of verdict once, in order.
    await receiver.waitFor('readiness ready', (all) => all.some((r) => r.payload.data.verdict === 'ready'));
    const told = receiver.received
      .filter((r) => r.payload.type === 'release.readiness_changed')
      .map((r) => [r.payload.data.previousVerdict, r.payload.data.verdict]);
    expect(told).to.deep.equal([
      [null, 'at_risk'],
      ['at_risk', 'blocked'],
      ['blocked', 'ready'],
    ]);

    // The MCP tool answers the same, to a read key.
    const reader = (await t.request('POST', '/api-keys', { key, body: { name: 'reader', scope: 'read' } })).body.key;
    const client = await mcpClient(t.service.restUrl, reader);
    try {
      const tool = (await client.listTools()).tools.find((x) => x.name === 'svc_release_readiness')!;
      expect(tool.annotations).to.include({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(tool.description).to.contain('Needs scope read');
      const answer = await call(client, 'svc_release_readiness', { releaseId: release.id });
      expect(answer.isError).to.equal(false);
      expect(answer.body).to.deep.equal(await readiness(release.id));
      expect(
        (await call(client, 'svc_release_readiness', { releaseId: 'rel_01jnotthere000000000000000' })).isError,
      ).to.equal(true);
    } finally {
      await client.close();
    }
    // Another project's key sees no such release.
    expect((await t.request('GET', `/releases/${release.id}/readiness`)).status).to.equal(404);
  });

  it("judges with the project's thresholds, changed through /platform/settings", async () => {
    const settings = await api('GET', '/platform/settings');
    expect(settings.body.readiness).to.deep.equal({
      minPassRate: 0.95,
      blockingPassRate: 0.8,
      blockingBugSeverities: ['critical'],
      atRiskBugSeverities: ['major'],
      maxFlakyCases: 0,
    });
    const release = await post('/releases', { name: '3.0.0' });
    const run = await post('/tests/runs', { title: '3.0 round', releaseId: release.id });
    const cases = [];
    for (let i = 0; i < 4; i++) cases.push(await post('/tests/cases', { title: `case ${i}`, steps: [] }));
    for (const [i, c] of cases.entries())
      await post('/tests/results', { testRunId: run.id, testCaseId: c.id, status: i === 0 ? 'failed' : 'passed' });
    expect((await readiness(release.id)).verdict).to.equal('blocked'); // 75% < 80%
    const changed = await t.request('PATCH', '/platform/settings', {
      key,
      body: { readiness: { blockingPassRate: 0.7, minPassRate: 0.75 } },
      headers: { 'if-match': settings.headers.get('etag')! },
    });
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.include({ version: 1 });
    const r = await readiness(release.id);
    expect(r.thresholds).to.include({ blockingPassRate: 0.7, minPassRate: 0.75 });
    expect(rule(r, 'pass_rate')).to.deep.include({ status: 'passed', measured: 0.75 });
    expect((await api('PATCH', '/platform/settings', { readiness: { blockingPassRate: 0.9 } })).status).to.equal(400); // above minPassRate
    expect((await api('PATCH', '/platform/settings', { readiness: { minPassRate: 2 } })).status).to.equal(400);
    expect(
      (
        await t.request('PATCH', '/platform/settings', {
          key,
          body: { readiness: { minPassRate: null } },
          headers: { 'if-match': '"0"' },
        })
      ).status,
    ).to.equal(412);
    const reset = await api('PATCH', '/platform/settings', {
      readiness: { minPassRate: null, blockingPassRate: null },
    });
    expect(reset.body.readiness).to.include({ minPassRate: 0.95, blockingPassRate: 0.8 });
    // Another project keeps its defaults.
    expect((await t.request('GET', '/platform/settings')).body.readiness.minPassRate).to.equal(0.95);
  });

  it('marks a covers link suspect when the requirement changes after its case passed, until the case runs again or the link is confirmed', async () => {
    const release = await post('/releases', { name: '4.0.0' });
    const plan = await post('/release-plans', { title: '4.0 scope', releaseId: release.id });
    const requirement = await post('/requirements', {
      title: 'Search finds products',
      acceptanceCriteria: ['by name'],
    });
    await api('PATCH', `/release-plans/${plan.id}`, { itemIds: [requirement.id] }); // planned through its release plan
    const search = await post('/tests/cases', { title: 'Search', steps: [] });
    const link = await post(`/tests/cases/${search.id}/links`, { targetId: requirement.id, relation: 'covers' });
    const run = await post('/tests/runs', { title: '4.0 round', releaseId: release.id, testCaseIds: [search.id] });
    await post('/tests/results', { testRunId: run.id, testCaseId: search.id, status: 'passed' });
    const coverage = async () => (await api('GET', `/requirements/${requirement.id}/coverage`)).body;
    expect((await coverage()).testCases[0]).to.include({ suspect: false });
    expect((await readiness(release.id)).verdict).to.equal('ready');

    // A change of its status is not a change of what it says; a new acceptance criterion is.
    await api('PATCH', `/requirements/${requirement.id}`, { status: 'approved' });
    expect((await coverage()).testCases[0].suspect).to.equal(false);
    const changed = await api('PATCH', `/requirements/${requirement.id}`, {
      acceptanceCriteria: ['by name', 'by category'],
    });
    expect(changed.body.contentChangedAt).to.be.a('string');
    expect((await coverage()).testCases[0]).to.deep.include({ suspect: true, linkIds: [link.id] });
    expect((await coverage()).summary).to.include({ suspect: 1, passed: 1 });
    const suspect = await readiness(release.id);
    expect(suspect.verdict).to.equal('at_risk');
    expect(rule(suspect, 'suspect_coverage').records).to.deep.equal([
      {
        id: requirement.id,
        kind: 'requirement',
        title: 'Search finds products',
        reason: 'suspect',
        testCaseId: search.id,
        linkId: link.id,
      },
    ]);
    expect(rule(suspect, 'requirements_passing').status).to.equal('passed'); // counted apart

    // Confirmed by someone who checked: no longer suspect.
    const confirmed = await api('POST', `/requirements/${requirement.id}/links/${link.id}/confirm`);
    expect(confirmed.status).to.equal(200);
    expect(confirmed.body.confirmedAt).to.be.a('string');
    expect((await coverage()).testCases[0].suspect).to.equal(false);
    expect((await readiness(release.id)).verdict).to.equal('ready');
    expect(
      (await api('POST', `/requirements/${requirement.id}/links/lnk_01jnotthere00000000000000/confirm`)).status,
    ).to.equal(404);

    // Changed again: suspect until the case runs again.
    await api('PATCH', `/requirements/${requirement.id}`, { description: 'Also by category' });
    expect((await coverage()).testCases[0].suspect).to.equal(true);
    await post('/tests/results', { testRunId: run.id, testCaseId: search.id, status: 'passed' });
    expect((await coverage()).testCases[0].suspect).to.equal(false);
    expect(rule(await readiness(release.id), 'suspect_coverage').status).to.equal('passed');
  });

  it('lists every new route, body and answer type and the event in /openapi.json', async () => {
    const spec = (await t.request('GET', '/openapi.json')).body;
    const importOp = spec.paths['/api/v1/tests/runs/{id}/results/import'].post;
    expect(Object.keys(importOp.requestBody.content)).to.deep.equal([
      'application/xml',
      'application/json',
      'multipart/form-data',
    ]);
    expect(importOp.requestBody.content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/CtrfReport',
    });
    expect(importOp.responses['201'].content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/TestResultImport',
    });
    expect(Object.keys(importOp.responses)).to.include.members(['400', '404', '409', '413', '415']);
    expect(
      spec.paths['/api/v1/releases/{id}/readiness'].get.responses['200'].content['application/json'].schema,
    ).to.deep.equal({ $ref: '#/components/schemas/ReleaseReadiness' });
    expect(Object.keys(spec.paths['/api/v1/platform/settings'])).to.have.members(['get', 'patch']);
    expect(spec.paths['/api/v1/requirements/{id}/links/{linkId}/confirm'].post.operationId).to.equal(
      'confirmRequirementLink',
    );
    expect(spec.components.schemas.ReleaseReadinessChangedEvent.properties.data).to.deep.equal({
      $ref: '#/components/schemas/ReleaseReadiness',
    });
    expect(spec.components.schemas.ReleaseReadiness.properties.rules.items.properties.status.enum).to.deep.equal([
      'passed',
      'failed',
      'undefined',
    ]);
  });
});
