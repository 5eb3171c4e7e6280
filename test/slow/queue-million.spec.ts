// A million dispatches of the queue rule (src/otp/queue) in the deterministic simulation of
// test/queue/simulation.ts: 200 slots, a 50,000-run nightly burst, gate floods, superseded pushes, a
// group split in twenty, limits; about 25 s and 170 MB (no run is kept once it ended).
import { expect } from 'chai';
import { DEFAULT_POLICY } from '../../src/otp/queue/model.js';
import { expectSafe } from '../queue/properties.js';
import { mixed } from '../queue/scenarios.js';
import { simulate } from '../queue/simulation.js';

describe('queue rule: a million dispatches', function () {
  this.timeout(300_000);

  it('loses no run, starts none twice, keeps every limit, leaves no slot idle, starves no group', () => {
    const outcome = simulate(mixed(5, 68, 50_000, 200));
    expect(outcome.dispatches).to.be.at.least(1_000_000);
    expectSafe(outcome);
    const bound = DEFAULT_POLICY.batchToNormalMs + DEFAULT_POLICY.normalToGateMs;
    for (const [group, wait] of outcome.headWaits) expect(wait, `${group} went without a start`).to.be.at.most(bound);
    // A gate run of an owner under its cap waits only for the gate runs ranked with it.
    expect(outcome.longestWaits.get('ci/0')).to.be.at.most(120_000);
  });
});
