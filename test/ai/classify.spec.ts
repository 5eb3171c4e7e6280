// The triage rules alone: which facts lead where, in which order, and that the same facts give the same answer.
import { expect } from 'chai';
import { type CaseFacts, classify, flips } from '../../src/ai/classify.js';

const facts = (over: Partial<CaseFacts> = {}): CaseFacts => ({
  signature: 'sig_00000000000000000000',
  code: 'E_ASSERT_FAILED',
  message: 'expected text to equal "a", got "b"',
  action: 'assert:text',
  source: 'executor',
  tried: [],
  elementFound: true,
  actual: 'b',
  consoleErrors: 0,
  runStatus: 'failed',
  runReason: null,
  history: ['passed', 'passed'],
  earlierOfSignature: 0,
  bugs: [],
  rules: [],
  ...over,
});

describe('triage rules (classify)', () => {
  it('counts outcome changes from the current failure back', () => {
    expect(flips([])).to.equal(0);
    expect(flips(['passed', 'passed'])).to.equal(1);
    expect(flips(['failed', 'failed', 'passed'])).to.equal(1);
    expect(flips(['passed', 'failed', 'passed'])).to.equal(3);
  });

  it('calls a failed check on a found element that passed before a product regression', () => {
    expect(classify(facts())).to.include({
      category: 'product_regression',
      confidence: 0.85,
      suggestedAction: 'file_bug',
      decidedBy: 'facts',
    });
  });

  it('calls a first candidate that matched nothing while another matched drift, and an ambiguous one too', () => {
    const tried = [
      { describe: 'testid=pay', count: 0 },
      { describe: 'role=button[name=Pay]', count: 1 },
    ];
    expect(classify(facts({ code: 'E_LOCATOR_NOT_FOUND', tried, elementFound: false }))).to.include({
      category: 'locator_drift',
      confidence: 0.9,
      suggestedAction: 'accept_healing',
    });
    expect(
      classify(
        facts({ code: 'E_LOCATOR_NOT_FOUND', tried: [{ describe: 'text=Save', count: 3 }], elementFound: false }),
      ),
    ).to.include({ category: 'locator_drift', suggestedAction: 'update_test' });
  });

  it('puts the environment before history, and history before locators', () => {
    const lost = facts({
      code: 'E_INTERNAL',
      source: 'service',
      message: 'executor lost',
      history: ['failed', 'passed', 'failed'],
    });
    expect(classify(lost).category).to.equal('environment');
    expect(
      classify(facts({ code: 'E_TIMEOUT', action: 'navigate', message: 'page.goto: Timeout 2000ms exceeded.' }))
        .category,
    ).to.equal('environment');
    const flaky = facts({
      code: 'E_LOCATOR_NOT_FOUND',
      tried: [{ describe: 'testid=x', count: 0 }],
      elementFound: false,
      history: ['passed', 'failed', 'passed'],
    });
    expect(classify(flaky)).to.include({ category: 'flaky', suggestedAction: 'quarantine', confidence: 0.8 });
  });

  it('lets an open bug, then a rule, then a correction win', () => {
    const bug = { id: 'bug_1', title: 'Total wrong', status: 'open' };
    expect(classify(facts({ bugs: [bug] })).category).to.equal('known_issue');
    expect(classify(facts({ bugs: [{ ...bug, status: 'resolved' }] })).reasons.join(' ')).to.contain(
      'no longer open, yet it fails again',
    );
    const rule = {
      id: 'air_1',
      field: 'message' as const,
      pattern: '*got "b"',
      category: 'environment' as const,
      note: null,
      createdBy: null,
      createdAt: '',
    };
    expect(classify(facts({ bugs: [bug], rules: [rule] }))).to.include({ category: 'environment', decidedBy: 'rule' });
    const correction = {
      signature: 'sig_00000000000000000000',
      category: 'flaky' as const,
      note: null,
      createdBy: null,
      createdAt: '',
      updatedAt: '',
    };
    expect(classify(facts({ bugs: [bug], rules: [rule], correction }))).to.include({
      category: 'flaky',
      decidedBy: 'correction',
      confidence: 1,
    });
  });

  it('reads a rule pattern as text, * for any run of characters, never as a regular expression', () => {
    const rule = (pattern: string) => ({
      id: 'air_1',
      field: 'message' as const,
      pattern,
      category: 'environment' as const,
      note: null,
      createdBy: null,
      createdAt: '',
    });
    expect(classify(facts({ message: 'a.b(c)', rules: [rule('.b(c')] })).decidedBy).to.equal('rule');
    expect(classify(facts({ message: 'axb', rules: [rule('a.b')] })).decidedBy).to.equal('facts');
    expect(classify(facts({ message: 'start middle end', rules: [rule('start*end')] })).decidedBy).to.equal('rule');
    expect(classify(facts({ message: 'start middle', rules: [rule('start*end')] })).decidedBy).to.equal('facts');
  });

  it('answers the same for the same facts', () => {
    const f = facts({ history: ['passed', 'failed', 'passed', 'passed'], consoleErrors: 2 });
    expect(classify(f)).to.deep.equal(classify(structuredClone(f)));
  });
});
