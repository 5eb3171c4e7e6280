// The estimated start (src/otp/queue/estimate.ts): the later of the pool's bound and its group's pace.
import { expect } from 'chai';
import { startWithin } from '../../src/otp/queue/estimate.js';

describe('queue: the estimated start', () => {
  it('counts slots freeing one by one when its group has nothing in flight, and one release more at the latest', () => {
    expect(startWithin({ position: 9, own: 0, slots: 10, groupInFlight: 0 }, 60_000, 120_000)).to.deep.equal({
      from: 54_000,
      to: 132_000,
    });
  });

  it("keeps its group's pace when that is slower (other groups take their share meanwhile)", () => {
    // 1,000 of its group ahead, 100 of them in flight in a pool of 200: the group starts 100 per run's duration.
    expect(startWithin({ position: 1_000, own: 1_000, slots: 200, groupInFlight: 100 }, 60_000, 90_000)).to.deep.equal({
      from: 600_000,
      to: 901_800,
    });
  });

  it('has no range without an open slot', () => {
    expect(startWithin({ position: 0, own: 0, slots: 0, groupInFlight: 0 }, 1, 2)).to.equal(undefined);
  });
});
