// Running ways of test/runner/hostile.ts through the real service and otp-runner, and checking them:
// shared by the fast suite (a representative few, origins.spec.ts) and the slow one (every way,
// test/slow/hostile.spec.ts).
import { expect } from 'chai';
import { chromium } from 'playwright-core';
import { findChromium } from '../../src/runner/browser.js';
import type { RunnerHarness } from './harness.js';
import type { Counter, Site, Way } from './hostile.js';

/** The steps of these ways, one after another in one run, and where each way's steps start. */
export function plan(ways: Way[], site: Site, B: Counter): { steps: unknown[]; at: Map<string, number> } {
  const steps: unknown[] = [];
  const at = new Map<string, number>();
  for (const way of ways) {
    at.set(way.name, steps.length);
    steps.push(...way.steps(site.origin, B.origin));
  }
  return { steps, at };
}

/** Resolves when every browser context the runner has open now is closed (and with it its gate). */
export function contextsClosed(h: RunnerHarness): Promise<unknown> {
  return Promise.all(h.runner.browser.contexts().map((c) => new Promise((resolve) => c.once('close', resolve))));
}

const codes = (run: any, from: number, count: number) =>
  run.steps.slice(from, from + count).map((s: any) => s.error?.code ?? s.status);

/** What went wrong with a way, one line each: the suites expect none, and print them all at once. */
const describeSteps = (run: any, from: number, count: number) =>
  JSON.stringify(
    run.steps.slice(from, from + count).map((s: any) => (s.error ? `${s.error.code}: ${s.error.message}` : s.status)),
  );

/** With B allowed: every way reached B (its mark seen there), and every step passed. */
export async function runAllowed(h: RunnerHarness, ways: Way[], site: Site, B: Counter): Promise<void> {
  const { steps, at } = plan(ways, site, B);
  site.awaiting = 'mark';
  site.outcomes.clear();
  B.reset();
  const run = await h.run(steps, { allowedOrigins: [site.origin, B.origin] });
  const problems: string[] = [];
  for (const way of ways) {
    const from = at.get(way.name)!;
    const count = way.steps(site.origin, B.origin).length;
    if (codes(run, from, count).some((c: string) => c !== 'pass'))
      problems.push(`${way.name}: steps ${describeSteps(run, from, count)}`);
    if (way.mark !== 'none' && !(await B.arrived(way.mark, 0))) problems.push(`${way.name}: did not reach B`);
    if (way.seesRefusal && way.mark !== 'none' && site.outcomes.get(way.name) !== 'ok')
      problems.push(`${way.name}: its page saw ${site.outcomes.get(way.name)}`);
  }
  expect(problems, `with B allowed; B saw ${B.summary()}`).to.deep.equal([]);
}

/**
 * With only A allowed: nothing reached B, by any way; each way that leaves the page failed the step
 * that caused it with E_NAVIGATION_BLOCKED naming B, and every other step passed (a request refused
 * is not a failure of the step).
 */
export async function runForbidden(h: RunnerHarness, ways: Way[], site: Site, B: Counter): Promise<void> {
  const { steps, at } = plan(ways, site, B);
  site.awaiting = 'nothing';
  site.outcomes.clear();
  B.reset();
  const run = await h.run(steps, { allowedOrigins: [site.origin] });
  // Every page finished its attempt before its `done` (or its refused navigation) let the run go on;
  // once the run's context is closed its gate is closed too, and nothing of the run can reach B any
  // more: B's counts are final from here, with no settling time.
  await contextsClosed(h);
  expect(
    {
      connections: B.connections,
      requests: B.requests,
      upgrades: B.upgrades,
      notHttp: B.notHttp,
      datagrams: B.datagrams,
    },
    'nothing reached B',
  ).to.deep.equal({
    connections: 0,
    requests: [],
    upgrades: [],
    notHttp: 0,
    datagrams: 0,
  });
  const problems: string[] = [];
  for (const way of ways) {
    const from = at.get(way.name)!;
    const count = way.steps(site.origin, B.origin).length;
    const got = codes(run, from, count);
    const blocked = got
      .map((c: string, i: number) => (c === 'E_NAVIGATION_BLOCKED' ? i : -1))
      .filter((i: number) => i >= 0);
    const wanted =
      way.kind === 'sub'
        ? []
        : way.blockedAt !== undefined
          ? [way.blockedAt]
          : blocked.length === 1
            ? blocked
            : ['one step'];
    const others = got.filter((c: string, i: number) => c !== 'pass' && !blocked.includes(i));
    const named = blocked.every((i: number) => run.steps[from + i].error.message.includes(`${B.origin}/b/${way.name}`));
    if (JSON.stringify(blocked) !== JSON.stringify(wanted) || others.length || !named)
      problems.push(`${way.name}: steps ${describeSteps(run, from, count)}`);
    // The attempt was made, and refused: the page saw it fail.
    if (way.seesRefusal && site.outcomes.get(way.name) !== 'failed')
      problems.push(`${way.name}: its page saw ${site.outcomes.get(way.name)}`);
  }
  expect(problems, 'with only A allowed').to.deep.equal([]);
}

/**
 * The ways Chromium does not take behind the gate even when allowed, each shown to reach B from a
 * plain Chromium (launched without the runner's switches, a context without proxy or route): the
 * page's attempt is real, and the runner is what stops it.
 */
export async function runPlain(ways: Way[], site: Site, B: Counter): Promise<void> {
  const browser = await chromium.launch({ executablePath: (await findChromium()).path });
  const problems: string[] = [];
  try {
    const page = await (await browser.newContext()).newPage();
    site.awaiting = 'plain';
    for (const way of ways.filter((w) => w.plain)) {
      B.reset();
      await page.goto(`${site.origin}/way/${way.name}`);
      if (!(await B.arrived(way.plain!, 10_000)))
        problems.push(`${way.name}: did not reach B from a plain Chromium (${B.summary()})`);
    }
  } finally {
    await browser.close();
  }
  expect(problems).to.deep.equal([]);
}
