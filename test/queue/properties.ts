// The properties docs/queues.md promises, over a simulation's outcome: shared by the quick
// simulation (test/queue) and the million dispatches (test/slow).
import { expect } from 'chai';
import { jain, type Outcome } from './simulation.js';

/** No run lost or started twice, no limit exceeded, no slot idle while a run could start. */
export function expectSafe(outcome: Outcome): void {
  expect(outcome.wrongStarts, 'runs started twice, or ended unstarted').to.equal(0);
  expect(outcome.unfinished, 'runs lost (neither ended nor withdrawn)').to.equal(0);
  expect(outcome.dispatches + outcome.withdrawn, 'every run posted started once or was withdrawn').to.equal(
    outcome.posted,
  );
  expect(outcome.queue.waiting, 'runs left queued').to.equal(0);
  expect(outcome.overLimit, 'starts beyond a limit (slots, maxInFlight, gate cap)').to.equal(0);
  expect(outcome.idleWhileEligible, 'slots left idle while a run could start').to.equal(0);
}

/** Each window's owners that had work queued throughout it, with their executor time over their weight (slots held on average). */
export function windowShares(outcome: Outcome, weights: Record<string, number>): Array<Map<string, number>> {
  const { window } = outcome;
  const windows: Array<Map<string, number>> = [];
  outcome.held.forEach((held, w) => {
    const from = w * window;
    const shares = new Map<string, number>();
    for (const [owner, [first, last]] of outcome.backlog) {
      if (first <= from && last >= from + window)
        shares.set(owner, (held.get(owner) ?? 0) / (weights[owner] ?? 1) / window);
    }
    if (shares.size >= 2) windows.push(shares);
  });
  return windows;
}

export { jain };
