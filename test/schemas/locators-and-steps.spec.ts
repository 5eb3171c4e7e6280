// Which locators and step actions the schemas accept, and the one message each mistake gets.
import { expect } from 'chai';
import type { Locator, TestCaseStep } from '../../src/otp/protocol/schemas/index.js';
import { ACTION_NAMES, LOCATOR_STRATEGIES } from '../../src/otp/protocol/schemas/index.js';
import { validateStepAction, validateTestCaseSteps } from '../../src/otp/protocol/validators.js';
import { action, checkLocator, css, errorsOf, expectError, expectOnly, expectValid } from './helpers.js';

describe('Locators: every strategy, nesting through within, candidates; a bad one is reported at its field', () => {
  it('accepts every strategy', () => {
    for (const by of LOCATOR_STRATEGIES) expectValid(checkLocator({ by, value: 'x' }), by);
  });

  it('accepts name, exact, nth, frame and nested within', () => {
    const locator: Locator = {
      by: 'role',
      value: 'button',
      name: 'Save',
      exact: true,
      nth: 0,
      frame: 'iframe#editor',
      within: { by: 'testid', value: 'dialog', within: { by: 'css', value: 'main', nth: 2 } },
    };
    expectValid(checkLocator(locator));
  });

  it('accepts candidates, each a plain locator that may have within', () => {
    expectValid(
      checkLocator({
        candidates: [
          { by: 'testid', value: 'save' },
          { by: 'text', value: 'Save', within: { by: 'css', value: 'form' } },
        ],
      }),
    );
  });

  it('rejects an unknown strategy with the list of strategies', () => {
    expectOnly(
      checkLocator({ by: 'id', value: 'x' }, 'locator'),
      'locator.by',
      'must be one of: testid, role, label, placeholder, text, alt, title, css, xpath',
    );
  });

  it('rejects missing value, negative nth, non-boolean exact and unknown members', () => {
    expectOnly(checkLocator({ by: 'css' }), 'value', 'is required');
    expectOnly(checkLocator({ by: 'css', value: 'a', nth: -1 }), 'nth', 'must be >= 0');
    expectOnly(checkLocator({ by: 'css', value: 'a', nth: 1.5 }), 'nth', 'must be an integer');
    expectOnly(checkLocator({ by: 'css', value: 'a', exact: 'yes' }), 'exact', 'must be a boolean');
    expectOnly(checkLocator({ by: 'css', value: 'a', selector: 'b' }), 'selector', 'unknown property');
  });

  it('reports errors deep inside within', () => {
    expectOnly(
      checkLocator({ by: 'css', value: 'a', within: { by: 'css', value: 'b', within: { by: 'nope', value: 'c' } } }),
      'within.within.by',
      'must be one of',
    );
  });

  it('rejects empty candidates, a bad candidate, and candidates mixed with by/value', () => {
    expectOnly(checkLocator({ candidates: [] }), 'candidates', 'must have at least 1 item');
    expectOnly(
      checkLocator({ candidates: [{ by: 'css', value: 'a' }, { value: 'b' }] }),
      'candidates[1].by',
      'is required',
    );
    // a candidate is a plain locator: no nested candidates
    expectError(
      checkLocator({ candidates: [{ candidates: [{ by: 'css', value: 'a' }] }] }),
      'candidates[0].candidates',
      'unknown property',
    );
    expectError(checkLocator({ by: 'css', value: 'a', candidates: [css('b')] }), 'by', 'unknown property');
  });

  it('rejects a locator that is not an object', () => {
    expectOnly(checkLocator('#save', 'locator'), 'locator', 'must be an object');
  });
});

describe('Step actions: one branch per action, one message per mistake', () => {
  const loc = css('#target');
  const valid: Record<string, Record<string, unknown>[]> = {
    navigate: [{ url: 'https://example.test/' }, { url: '{{base_url}}/login', waitUntil: 'networkidle' }],
    click: [
      { locator: loc },
      { locator: { candidates: [loc, { by: 'role', value: 'button', name: 'Go' }] }, modifiers: ['Control', 'Shift'] },
    ],
    dblclick: [{ locator: loc }],
    rightClick: [{ locator: loc }],
    type: [
      { locator: loc, text: 'hello' },
      { locator: loc, text: '{{secret_1}}', delayMs: 20, clear: true },
      { locator: loc, text: '' },
    ],
    press: [{ key: 'Enter' }, { key: 'Control+A', locator: loc }],
    select: [
      { locator: loc, by: 'value', value: 'de' },
      { locator: loc, by: 'label', value: '{{country}}' },
      { locator: loc, by: 'index', value: 2 },
      { locator: loc, by: 'index', value: '2' },
    ],
    check: [{ locator: loc }],
    uncheck: [{ locator: loc }],
    hover: [{ locator: loc }],
    scroll: [{}, { dx: 0, dy: -300 }, { locator: loc, into: true }, { locator: loc, dy: 100 }],
    upload: [{ locator: loc, assetId: 'ast_01hx7q9c2m3n4p5r6s7t8v9w0y' }],
    wait: [{ ms: 500 }, { ms: 0 }, { locator: loc }, { locator: loc, state: 'detached' }, { networkidle: true }],
    screenshot: [{}, { fullPage: true }],
    assert: [{ kind: 'visible', locator: loc }],
    eval: [{ script: 'return document.title' }],
  };

  it('has examples for every action', () => {
    expect(Object.keys(valid).sort()).to.deep.equal([...ACTION_NAMES].sort());
  });

  for (const [name, examples] of Object.entries(valid)) {
    it(`accepts valid ${name} steps`, () => {
      for (const ex of examples) expectValid(action({ action: name, ...ex }), `${name} ${JSON.stringify(ex)}`);
    });
  }

  const invalid: Array<[string, Record<string, unknown>, string, string]> = [
    ['navigate without url', { action: 'navigate' }, 'otp.url', 'is required'],
    ['navigate with empty url', { action: 'navigate', url: '' }, 'otp.url', 'must not be empty'],
    [
      'navigate with bad waitUntil',
      { action: 'navigate', url: '/', waitUntil: 'idle' },
      'otp.waitUntil',
      'must be one of: load, domcontentloaded, networkidle, commit',
    ],
    ['click without locator', { action: 'click' }, 'otp.locator', 'is required'],
    [
      'click with bad modifier',
      { action: 'click', locator: loc, modifiers: ['Ctrl'] },
      'otp.modifiers[0]',
      'must be one of: Alt, Control, Meta, Shift',
    ],
    ['click with unknown member', { action: 'click', locator: loc, button: 'left' }, 'otp.button', 'unknown property'],
    ['dblclick without locator', { action: 'dblclick' }, 'otp.locator', 'is required'],
    ['rightClick with url', { action: 'rightClick', locator: loc, url: '/' }, 'otp.url', 'unknown property'],
    ['type without text', { action: 'type', locator: loc }, 'otp.text', 'is required'],
    [
      'type with negative delay',
      { action: 'type', locator: loc, text: 'a', delayMs: -1 },
      'otp.delayMs',
      'must be >= 0',
    ],
    [
      'type with string clear',
      { action: 'type', locator: loc, text: 'a', clear: 'true' },
      'otp.clear',
      'must be a boolean',
    ],
    ['press without key', { action: 'press', locator: loc }, 'otp.key', 'is required'],
    [
      'select with bad by',
      { action: 'select', locator: loc, by: 'text', value: 'a' },
      'otp.by',
      'must be one of: value, label, index',
    ],
    ['select without by', { action: 'select', locator: loc, value: 'a' }, 'otp.by', 'is required'],
    [
      'select with boolean value',
      { action: 'select', locator: loc, by: 'value', value: true },
      'otp.value',
      'must be a string or an integer',
    ],
    ['check without locator', { action: 'check' }, 'otp.locator', 'is required'],
    ['uncheck with bad locator', { action: 'uncheck', locator: { by: 'css' } }, 'otp.locator.value', 'is required'],
    ['hover without locator', { action: 'hover' }, 'otp.locator', 'is required'],
    [
      'scroll into view without locator',
      { action: 'scroll', into: true },
      'otp.locator',
      'is required when into is true',
    ],
    ['scroll with fractional dy', { action: 'scroll', dy: 1.5 }, 'otp.dy', 'must be an integer'],
    ['upload with a bad asset id', { action: 'upload', locator: loc, assetId: 'file.png' }, 'otp.assetId', '"ast_"'],
    ['upload without asset', { action: 'upload', locator: loc }, 'otp.assetId', 'is required'],
    ['wait with nothing', { action: 'wait' }, 'otp', 'must have exactly one of: ms, locator, networkidle'],
    [
      'wait with two forms',
      { action: 'wait', ms: 100, locator: loc },
      'otp',
      'must have only one of: ms, locator, networkidle (found ms, locator)',
    ],
    [
      'wait with state but no locator',
      { action: 'wait', ms: 10, state: 'visible' },
      'otp.locator',
      'is required when state is present',
    ],
    [
      'wait with bad state',
      { action: 'wait', locator: loc, state: 'gone' },
      'otp.state',
      'must be one of: visible, hidden, attached, detached',
    ],
    ['wait with negative ms', { action: 'wait', ms: -5 }, 'otp.ms', 'must be >= 0'],
    ['wait with networkidle false', { action: 'wait', networkidle: false }, 'otp.networkidle', 'must be true'],
    ['screenshot with string fullPage', { action: 'screenshot', fullPage: 'yes' }, 'otp.fullPage', 'must be a boolean'],
    ['eval without script', { action: 'eval' }, 'otp.script', 'is required'],
  ];

  for (const [title, step, field, text] of invalid) {
    it(`rejects ${title}`, () => expectOnly(action(step), field, text));
  }

  it('gives one clear message for an unknown action', () => {
    const result = action({ action: 'clik', locator: loc });
    expectOnly(
      result,
      'otp.action',
      'unknown action "clik"; expected one of navigate, click, dblclick, rightClick, type, press, select',
    );
    expect(errorsOf(result)[0]!.message).to.contain('assert, eval');
  });

  it('gives one clear message for a missing or non-string action', () => {
    expectOnly(action({ locator: loc }), 'otp.action', 'is required; expected one of navigate, click');
    expectOnly(action({ action: 3 }), 'otp.action', 'must be a string; expected one of navigate');
    expectOnly(validateStepAction('click'), '(root)', 'must be an object');
  });

  it('accepts {{var}} strings in url, text, value, key and expected', () => {
    expectValid(action({ action: 'navigate', url: '{{base_url}}/login?next={{next}}' }));
    expectValid(
      action({ action: 'type', locator: { by: 'label', value: '{{field_label}}' }, text: '{{user}}@{{domain}}' }),
    );
    expectValid(action({ action: 'press', key: '{{key}}' }));
    expectValid(action({ action: 'assert', kind: 'url', op: 'contains', expected: '{{base_url}}/home' }));
  });
});

describe('Test-case steps: the REST form of a step, checked field by field, at most 500', () => {
  const click = { action: 'click', locator: css('#go') } as const;

  it('accepts a full step and a bare one', () => {
    const steps: TestCaseStep[] = [
      { otp: { action: 'navigate', url: '{{base_url}}/login' } },
      { otp: click, label: 'Press go', timeoutMs: 600000, continueOnFail: true, evidence: 'always' },
      { otp: { action: 'screenshot' }, timeoutMs: 1, evidence: 'never' },
    ];
    const result = validateTestCaseSteps(steps);
    expectValid(result);
    if (result.ok) expect(result.value).to.equal(steps);
    expectValid(validateTestCaseSteps([]));
  });

  it('names the exact failing field of a step', () => {
    const steps = [{ otp: click }, { otp: click }, { otp: { action: 'click', locator: { by: 'klass', value: 'x' } } }];
    expectOnly(validateTestCaseSteps(steps), 'steps[2].otp.locator.by', 'must be one of: testid, role');
    expectOnly(
      validateTestCaseSteps([{ otp: click }, { otp: { action: 'clik' } }]),
      'steps[1].otp.action',
      'unknown action "clik"',
    );
  });

  it('checks label, timeoutMs, continueOnFail, evidence and extra members', () => {
    expectOnly(
      validateTestCaseSteps([{ otp: click, label: 'x'.repeat(201) }]),
      'steps[0].label',
      'at most 200 characters',
    );
    expectValid(validateTestCaseSteps([{ otp: click, label: 'x'.repeat(200) }]));
    expectOnly(validateTestCaseSteps([{ otp: click, timeoutMs: 0 }]), 'steps[0].timeoutMs', 'must be >= 1');
    expectOnly(validateTestCaseSteps([{ otp: click, timeoutMs: 600001 }]), 'steps[0].timeoutMs', 'must be <= 600000');
    expectOnly(
      validateTestCaseSteps([{ otp: click, continueOnFail: 'no' }]),
      'steps[0].continueOnFail',
      'must be a boolean',
    );
    expectOnly(
      validateTestCaseSteps([{ otp: click, evidence: 'onfail' }]),
      'steps[0].evidence',
      'must be one of: always, onFail, never',
    );
    expectOnly(validateTestCaseSteps([{ otp: click, action: 'click' }]), 'steps[0].action', 'unknown property');
    expectOnly(validateTestCaseSteps([{ label: 'no action' }]), 'steps[0].otp', 'is required');
  });

  it('refuses a non-array and more than 500 steps', () => {
    expectOnly(validateTestCaseSteps({ otp: click }), 'steps', 'must be an array');
    expectOnly(
      validateTestCaseSteps(Array.from({ length: 501 }, () => ({ otp: click }))),
      'steps',
      'at most 500 items',
    );
  });
});
