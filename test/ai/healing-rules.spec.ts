// When a step's report makes a healing proposal (src/ai/healing/rules.ts).
import { expect } from 'chai';
import { evidenceKey, proposalsOf, sightingOf } from '../../src/ai/healing/rules.js';
import type { LocatorStep } from '../../src/ai/run-history.js';

const v1 = { by: 'testid', value: 'save-v1' };
const save = { by: 'role', value: 'button', name: 'Save' };
const step = (over: Partial<LocatorStep>): LocatorStep => ({
  runId: 'otr_1',
  createdAt: '2026-01-01T00:00:00.000Z',
  testCaseId: 'tc_1',
  version: 1,
  position: 2,
  label: null,
  status: 'pass',
  locator: { candidates: [v1, save] },
  usedLocator: save,
  triedLocators: [
    { ...v1, count: 0 },
    { ...save, count: 1, visible: true, enabled: true },
  ],
  screenshotAssetId: null,
  ...over,
});

describe('ai: healing rules', () => {
  it('proposes the used candidate when it matched one visible, enabled element', () => {
    expect(sightingOf(step({}))).to.deep.include({
      rule: 'passed_through_other',
      newLocator: { by: 'role', name: 'Save', value: 'button' },
      oldLocator: { by: 'testid', value: 'save-v1' },
    });
  });

  it('proposes nothing without proof: an old executor (no visible/enabled), a hidden or disabled element, or more than one match', () => {
    expect(sightingOf(step({ triedLocators: null }))).to.equal(null);
    expect(
      sightingOf(
        step({
          triedLocators: [
            { ...v1, count: 0 },
            { ...save, count: 1 },
          ],
        }),
      ),
    ).to.equal(null);
    expect(
      sightingOf(
        step({
          triedLocators: [
            { ...v1, count: 0 },
            { ...save, count: 1, visible: false, enabled: true },
          ],
        }),
      ),
    ).to.equal(null);
    expect(
      sightingOf(
        step({
          triedLocators: [
            { ...v1, count: 0 },
            { ...save, count: 1, visible: true, enabled: false },
          ],
        }),
      ),
    ).to.equal(null);
    expect(
      sightingOf(
        step({
          triedLocators: [
            { ...v1, count: 0 },
            { ...save, count: 2 },
          ],
        }),
      ),
    ).to.equal(null);
  });

  it('proposes nothing for a step that went through its first candidate', () => {
    expect(sightingOf(step({ usedLocator: v1, triedLocators: null }))).to.equal(null);
  });

  it("reads a failed step's tried list: first matched nothing, another exactly one", () => {
    const failed = step({ status: 'error', usedLocator: null });
    expect(sightingOf(failed)?.rule).to.equal('first_matched_nothing');
    expect(
      sightingOf({
        ...failed,
        triedLocators: [
          { ...v1, count: 1, visible: true, enabled: true },
          { ...save, count: 1, visible: true, enabled: true },
        ],
      }),
    ).to.equal(null);
  });

  it('groups sightings of the same step and fix into one proposal, newest run first, whatever the key order of a locator', () => {
    const drafts = proposalsOf([
      step({ runId: 'otr_1' }),
      step({ runId: 'otr_3', usedLocator: { value: 'button', name: 'Save', by: 'role' } }),
      step({ runId: 'otr_2', position: 4 }),
    ]);
    expect(drafts).to.have.length(2);
    const main = drafts.find((d) => d.position === 2)!;
    expect(main.evidence.runs.map((r) => r.runId)).to.deep.equal(['otr_3', 'otr_1']);
    expect(main.evidence.occurrences).to.equal(2);
    expect(main.key).to.equal(
      evidenceKey({
        testCaseId: 'tc_1',
        position: 2,
        oldLocator: { by: 'testid', value: 'save-v1' },
        newLocator: { by: 'role', name: 'Save', value: 'button' },
      }),
    );
  });
});
