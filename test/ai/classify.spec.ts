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

  it('calls an error page or an unreachable page the environment, quoting what said so', () => {
    const title = facts({
      action: 'assert:title',
      message: 'expected title to equal "Orders", got "503 Service Temporarily Unavailable"',
      actual: '503 Service Temporarily Unavailable',
    });
    expect(classify(title)).to.include({ category: 'environment', suggestedAction: 're_run' });
    expect(classify(title).reasons[0]).to.contain('"503 Service Temporarily Unavailable"');
    const navigated = facts({ navigations: [{ url: 'http://shop/a', status: 429, statusText: 'Too Many Requests' }] });
    expect(classify(navigated).reasons[0]).to.contain('answered HTTP 429 Too Many Requests');
    // The last navigation counts: a page that recovered says nothing of the environment.
    const recovered = facts({
      navigations: [
        { url: 'http://shop/a', status: 502 },
        { url: 'http://shop/a', status: 200 },
      ],
    });
    expect(classify(recovered).category).to.equal('product_regression');
    for (const error of [
      'net::ERR_NAME_NOT_RESOLVED',
      'net::ERR_CERT_DATE_INVALID',
      'no response: still waiting for the first byte',
    ])
      expect(classify(facts({ navigations: [{ url: 'http://shop/a', error }] })).category).to.equal('environment');
    // A 404 is the product's (or the test's) answer, not the environment's.
    expect(classify(facts({ navigations: [{ url: 'http://shop/a', status: 404 }] })).category).to.equal(
      'product_regression',
    );
  });

  it('knows a bug by how it is linked: the cause before the environment, the test case after it', () => {
    const bug = { id: 'bug_1', title: 'Total wrong', status: 'open' };
    const byResult = {
      ...bug,
      via: 'result' as const,
      how: 'found_by test result tr_1 (run otr_1, which failed the same way)',
    };
    expect(classify(facts({ bugs: [byResult] })).reasons[0]).to.contain('found_by test result tr_1');
    const byCase = { ...bug, via: 'case' as const, how: 'found_by test case tc_1' };
    expect(classify(facts({ bugs: [byCase] }))).to.include({ category: 'known_issue', confidence: 0.8 });
    const down = { message: 'page.goto: net::ERR_CONNECTION_REFUSED' };
    expect(classify(facts({ ...down, bugs: [byResult] })).category).to.equal('known_issue');
    expect(classify(facts({ ...down, bugs: [byCase] })).category).to.equal('environment');
    // A closed bug of the same cause: a regression of the fixed bug; of the test case alone, nothing.
    const fixed = classify(facts({ bugs: [{ ...byResult, status: 'resolved' }] }));
    expect(fixed).to.include({ category: 'product_regression', suggestedAction: 'reopen_bug' });
    expect(fixed.reasons.at(-1)).to.contain('regression of a fixed bug: bug bug_1');
    expect(classify(facts({ bugs: [{ ...byCase, status: 'closed' }] })).suggestedAction).to.equal('file_bug');
    // Failed, fixed (passes), failed again: the fixed bug explains the changes of outcome, not chance.
    const back = facts({
      history: ['passed', 'passed', 'failed', 'failed'],
      bugs: [{ ...byResult, status: 'resolved' }],
    });
    expect(classify(back).category).to.equal('product_regression');
    expect(classify({ ...back, bugs: [] }).category).to.equal('flaky');
  });

  it('calls a case that passed on a retry flaky before anything its locators or values say', () => {
    const retried = facts({ history: ['passed', 'flaky', 'passed'], attempts: 2 });
    const answer = classify(retried);
    expect(answer).to.include({ category: 'flaky', suggestedAction: 'quarantine', confidence: 0.9 });
    expect(answer.reasons[0]).to.contain('passed on a retry in 1 of its last 3 earlier runs');
    expect(answer.reasons[1]).to.equal('this run tried it 2 times and every attempt failed');
    const drifted = facts({
      code: 'E_LOCATOR_NOT_FOUND',
      tried: [{ describe: 'testid=x', count: 0 }],
      elementFound: false,
    });
    expect(classify({ ...drifted, history: ['flaky'] }).category).to.equal('flaky');
    // A flaky run counts as a pass between failures.
    expect(flips(['flaky', 'failed'])).to.equal(2);
  });

  it('says uncertain under 0.6, with the two likeliest categories and why, and suggests retries when none ran', () => {
    const vague = facts({ code: 'E_LOCATOR_NOT_FOUND', message: 'no element', elementFound: false, actual: null });
    const answer = classify(vague);
    expect(answer).to.include({
      category: 'product_regression',
      confidence: 0.5,
      uncertain: true,
      suggestedAction: 're_run_with_retries',
    });
    expect(answer.alternatives.map((a) => a.category)).to.deep.equal(['product_regression', 'locator_drift']);
    expect(answer.reasons[0]).to.match(/^uncertain: product_regression \(0\.5: .*\) or locator_drift \(0\.3: /);
    expect(answer.reasons.at(-1)).to.contain('re-run with retries');
    // Retried before: the hint is not given, and a confident answer is not uncertain.
    expect(classify({ ...vague, attempts: 2 }).suggestedAction).to.equal('file_bug');
    expect(classify(facts())).to.include({ uncertain: false }).and.have.property('alternatives').that.is.empty;
  });

  it('calls a check that found the page still loading flaky, unless it failed the run before too', () => {
    const loadingPage = facts({ actual: 'Loading…', message: 'expected text to equal "Sale", got "Loading…"' });
    expect(classify(loadingPage)).to.include({ category: 'flaky', confidence: 0.6, uncertain: false });
    expect(classify({ ...loadingPage, history: ['failed', 'passed'] }).category).to.equal('product_regression');
    expect(classify(facts({ actual: 'Please wait...' })).category).to.equal('flaky');
    expect(classify(facts({ actual: 'Loading fees apply' })).category).to.equal('product_regression');
    expect(classify(facts({ actual: 'Total: 40' })).category).to.equal('product_regression');
  });

  it('answers the same for the same facts', () => {
    const f = facts({ history: ['passed', 'failed', 'passed', 'passed'], consoleErrors: 2 });
    expect(classify(f)).to.deep.equal(classify(structuredClone(f)));
  });
});
