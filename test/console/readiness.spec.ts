// The release readiness page in a real headless Chromium: reached from the releases list, the verdict
// and every rule with its records on one screen (1440x900 and 1366x768 screenshots are written to
// $CONSOLE_SHOTS or the temp dir, to look at).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { type Browser, chromium } from 'playwright-core';
import { startTestService, type TestService } from '../support/service.js';
import { signIn } from './sign-in.js';

describe("Console: a release's readiness", function () {
  this.timeout(30_000);
  let t: TestService;
  let browser: Browser;
  let releaseId: string;
  const problems: string[] = [];
  const shots = process.env.CONSOLE_SHOTS ?? path.join(os.tmpdir(), 'otp-readiness-shots');

  before(async () => {
    [t, browser] = await Promise.all([
      startTestService(),
      chromium.launch({ executablePath: '/usr/bin/chromium', headless: true }),
    ]);
    fs.mkdirSync(shots, { recursive: true });
    const post = async (url: string, body: unknown) => (await t.request('POST', url, { body })).body;
    const release = await post('/releases', {
      name: '2.3.0',
      title: 'Spring',
      status: 'in_progress',
      releaseDate: '2026-12-01',
    });
    await post('/releases', { name: '2.4.0' });
    releaseId = release.id;
    const run = await post('/tests/runs', { title: '2.3.0 regression', releaseId });
    const reqs = [];
    for (const title of [
      'Customers pay with a saved card',
      'The basket shows its total with tax',
      'Search finds products by name',
      'Orders can be cancelled within 24 h',
    ])
      reqs.push(await post('/requirements', { title }));
    for (const r of reqs) await post(`/requirements/${r.id}/links`, { targetId: releaseId, relation: 'planned_for' });
    const cases = [];
    for (const title of [
      'Pay with a saved card',
      'Basket total',
      'Search by name',
      'Checkout as guest',
      'Apply a coupon',
    ])
      cases.push(await post('/tests/cases', { title, steps: [] }));
    for (let i = 0; i < 3; i++)
      await post(`/tests/cases/${cases[i].id}/links`, { targetId: reqs[i].id, relation: 'covers' });
    const statuses = ['passed', 'failed', 'passed', 'passed', 'error'];
    const results = [];
    for (const [i, c] of cases.entries())
      results.push(
        await post('/tests/results', {
          testRunId: run.id,
          testCaseId: c.id,
          status: statuses[i],
          labels: i === 3 ? ['flaky'] : [],
        }),
      );
    const bug = await post('/bugs', { title: 'Basket total misses tax on shipping', severity: 'critical' });
    await post(`/bugs/${bug.id}/links`, { targetId: results[1].id, relation: 'found_by' });
    const minor = await post('/bugs', { title: 'Coupon field loses focus', severity: 'minor' });
    await post(`/bugs/${minor.id}/links`, { targetId: results[4].id, relation: 'found_by' });
    await t.request('PATCH', `/requirements/${reqs[2].id}`, {
      body: { acceptanceCriteria: ['by name', 'by category'] },
    });
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('goes from the releases list to a readiness a release manager reads in one screen', async () => {
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 1366, height: 768 },
    ]) {
      const { context, page } = await signIn({
        browser,
        base: t.service.restUrl,
        key: t.adminKey,
        problems,
        viewport,
        from: '/console/releases',
        landing: /\/console\/releases$/,
      });
      await page.waitForSelector(`tr[data-release="${releaseId}"]`);
      await page.screenshot({ path: path.join(shots, `releases-${viewport.width}.png`) });
      await page.locator(`tr[data-release="${releaseId}"]`).getByRole('link', { name: 'Readiness' }).click();
      await page.waitForURL(new RegExp(`/console/releases/${releaseId}$`));
      await page.waitForSelector('table.rules tbody tr');
      expect(await page.locator('.verdict-line .badge').textContent()).to.equal('blocked');
      expect(
        await page.$$eval('table.rules tbody tr', (rows) =>
          rows.map((r) => [r.getAttribute('data-rule'), r.querySelector('.badge')!.textContent]),
        ),
      ).to.deep.equal([
        ['requirements_covered', 'failed'],
        ['requirements_passing', 'failed'],
        ['pass_rate', 'failed'],
        ['open_bugs', 'failed'],
        ['flaky_cases', 'failed'],
        ['new_failures', 'undefined'],
        ['suspect_coverage', 'failed'],
      ]);
      expect(await page.locator('tr[data-rule="open_bugs"]').textContent()).to.contain(
        'Basket total misses tax on shipping',
      );
      expect(await page.locator('tr[data-rule="pass_rate"] a', { hasText: 'Basket total' }).count()).to.equal(1);
      // One screen: the whole page fits the viewport's height at 1440x900.
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      if (viewport.width === 1440) expect(height).to.be.at.most(900);
      await page.screenshot({ path: path.join(shots, `readiness-${viewport.width}.png`), fullPage: true });
      await context.close();
    }
    expect(problems).to.deep.equal([]);
  });
});
