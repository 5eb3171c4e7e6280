// Every way out of allowedOrigins that a page on an allowed origin can try (test/runner/hostile.ts),
// in real Chromium through the real service and otp-runner: each is first shown to reach the second
// origin when that origin is allowed, then shown to reach nothing (no TCP connection, no request, no
// UDP datagram) when it is not. The fast suite (test/runner/origins.spec.ts) runs a representative few.
import { type RunnerHarness, startHarness } from '../runner/harness.js';
import { type Counter, type Site, startCounter, startSite, WAYS } from '../runner/hostile.js';
import { runAllowed, runForbidden, runPlain } from '../runner/hostile-run.js';

describe('otp-runner, slow: a hostile page tries every way out of allowedOrigins', function () {
  this.timeout(180_000);
  let h: RunnerHarness;
  let B: Counter;
  let site: Site;

  before(async () => {
    B = await startCounter();
    site = await startSite(B);
    h = await startHarness();
  });
  after(async () => {
    await h?.stop();
    await site?.close();
    await B?.close();
  });

  it(`each of the ${WAYS.length} ways reaches the other origin when it is allowed (so that no check below passes by accident)`, async () => {
    await runAllowed(h, WAYS, site, B);
  });

  it('the ways Chromium does not take behind the gate (UDP, speculation rules) reach it from a plain Chromium', async () => {
    await runPlain(WAYS, site, B);
  });

  it('none reaches it when it is not allowed; each navigation away fails its step with E_NAVIGATION_BLOCKED', async () => {
    await runForbidden(h, WAYS, site, B);
  });
});
