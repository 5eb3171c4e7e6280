import { expect } from 'chai';
import type {
  Capabilities,
  HelloPayload,
  StepExecPayload,
  StepReport,
} from '../../machines/types.js';
import {
  ACTION_NAMES,
  ASSERT_KINDS,
  INBOUND_TYPES,
  LOCATOR_STRATEGIES,
  MESSAGE_TYPES,
  OUTBOUND_TYPES,
  inboundMessageSchemas,
  otpSchemas,
  otpSchemasById,
  outboundMessageSchemas,
  toOpenApiComponents,
} from '../../src/otp/protocol/schemas/index.js';
import type { JsonSchema, Locator, TestCaseStep } from '../../src/otp/protocol/schemas/index.js';
import { ajv as otpAjv } from '../../src/validation/ajv.js';
import { formatErrors } from '../../src/validation/field-errors.js';
import {
  validateInbound,
  validateOutbound,
  validateStepAction,
  validateTestCaseSteps,
  validatorFor,
} from '../../src/otp/protocol/validators.js';
import type { FieldError } from '../../src/otp/protocol/validators.js';

// ---------------------------------------------------------------------------------------------
// helpers

const TS = '2024-05-01T12:00:00.000Z';
const SESSION = 'ots_01hx7q9c2m3n4p5r6s7t8v9w0y';
const RUN = 'otr_01hx7q9c2m3n4p5r6s7t8v9w0z';
let counter = 0;
const msgId = (): string => `msg_t${++counter}`;

function envelope(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { otp: '1.0', id: msgId(), ts: TS, type, ...extra };
}

function errorsOf(result: { ok: true } | { ok: false; errors: FieldError[] }): FieldError[] {
  expect(result.ok, 'expected validation to fail').to.equal(false);
  return result.ok ? [] : result.errors;
}

function expectValid(result: { ok: boolean; errors?: FieldError[] }, what = ''): void {
  expect(result.ok, `${what} should be valid: ${JSON.stringify(result.errors)}`).to.equal(true);
}

/** Exactly one error, on `field`, whose message contains `text`. */
function expectOnly(result: { ok: true } | { ok: false; errors: FieldError[] }, field: string, text: string): void {
  const errors = errorsOf(result);
  expect(errors, JSON.stringify(errors)).to.have.length(1);
  expect(errors[0]!.field).to.equal(field);
  expect(errors[0]!.message).to.contain(text);
}

/** Some error on `field` whose message contains `text`. */
function expectError(result: { ok: true } | { ok: false; errors: FieldError[] }, field: string, text: string): void {
  const errors = errorsOf(result);
  const hit = errors.find((e) => e.field === field && e.message.includes(text));
  expect(hit, `no error on ${field} containing "${text}" in ${JSON.stringify(errors)}`).to.not.equal(undefined);
}

const action = (a: unknown) => validateStepAction(a, 'otp');
const css = (value: string): Locator => ({ by: 'css', value });
const checkLocator = validatorFor<Locator>('LocatorOrCandidates');

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: conventions', () => {
  it('every schema has a unique PascalCase $id', () => {
    const ids = otpSchemas.map((s) => s.$id);
    for (const id of ids) expect(id).to.match(/^[A-Z][A-Za-z0-9]+$/);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('every $ref names a schema of the list', () => {
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.push(String(x));
          else walk(x);
        }
      }
    };
    otpSchemas.forEach(walk);
    expect(refs.length).to.be.greaterThan(20);
    for (const ref of refs) expect(otpSchemasById.has(ref), ref).to.equal(true);
  });

  it('every declared property has a description, and objects with properties reject extras', () => {
    const missing: string[] = [];
    const open: string[] = [];
    const walk = (v: unknown, path: string, inCondition: boolean): void => {
      if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}[${i}]`, inCondition));
      if (!v || typeof v !== 'object') return;
      const s = v as Record<string, unknown>;
      const props = s.properties as Record<string, unknown> | undefined;
      if (props && !inCondition) {
        for (const [name, sub] of Object.entries(props)) {
          if (sub && typeof sub === 'object' && typeof (sub as JsonSchema).description !== 'string') missing.push(`${path}.${name}`);
        }
        if (s.additionalProperties !== false) open.push(path);
      }
      for (const [k, x] of Object.entries(s)) {
        // if/then/else and allOf members only restate properties declared by their parent.
        walk(x, `${path}/${k}`, inCondition || k === 'if' || k === 'then' || k === 'else' || k === 'allOf');
      }
    };
    for (const s of otpSchemas) walk(s, String(s.$id), false);
    expect(missing, 'properties without description').to.deep.equal([]);
    expect(open, 'objects without additionalProperties: false').to.deep.equal([]);
  });

  it('the 14 message types are split between the two directions', () => {
    expect(MESSAGE_TYPES).to.have.length(14);
    const both = new Set([...INBOUND_TYPES, ...OUTBOUND_TYPES]);
    expect([...both].sort()).to.deep.equal([...MESSAGE_TYPES].sort());
    expect(Object.keys(inboundMessageSchemas).sort()).to.deep.equal([...INBOUND_TYPES].sort());
    expect(Object.keys(outboundMessageSchemas).sort()).to.deep.equal([...OUTBOUND_TYPES].sort());
    for (const id of [...Object.values(inboundMessageSchemas), ...Object.values(outboundMessageSchemas)]) {
      expect(otpSchemasById.has(id), id).to.equal(true);
    }
  });

  it('StepAction lists one branch per action name', () => {
    const oneOf = otpSchemasById.get('StepAction')!.oneOf as Array<{ $ref: string }>;
    const tags = oneOf.map((b) => ((otpSchemasById.get(b.$ref)!.properties as Record<string, { const: string }>).action.const));
    expect(tags).to.deep.equal([...ACTION_NAMES]);
  });

  it('toOpenApiComponents rewrites $ref on copies and drops $id', () => {
    const components = toOpenApiComponents();
    expect(Object.keys(components)).to.have.length(otpSchemas.length);
    const locator = components.Locator!;
    expect(locator.$id).to.equal(undefined);
    expect((locator.properties as Record<string, JsonSchema>).within!.$ref).to.equal('#/components/schemas/Locator');
    expect((components.StepAction!.oneOf as JsonSchema[])[0]!.$ref).to.equal('#/components/schemas/NavigateStep');
    // the originals still say 'Locator'
    expect(((otpSchemasById.get('Locator')!.properties as Record<string, JsonSchema>).within!).$ref).to.equal('Locator');
    expect(otpSchemasById.get('Locator')!.$id).to.equal('Locator');
  });

  it('schema members agree with the TypeScript types of machines/types.ts', () => {
    const keysOf = (id: string, path: string[] = []): string[] => {
      let s = otpSchemasById.get(id) as JsonSchema;
      for (const p of path) s = (s.properties as Record<string, JsonSchema>)[p]!;
      return Object.keys(s.properties as object).sort();
    };
    const capabilities = { record: 1, replay: 1, screenshot: 1, upload: 1, crossOrigin: 1, eval: 1, maxParallel: 1 } satisfies Record<keyof Capabilities, 1>;
    const hello = { executor: 1, name: 1, version: 1, capabilities: 1, projectId: 1 } satisfies Record<keyof HelloPayload, 1>;
    const report = { stepIndex: 1, status: 1, durationMs: 1, error: 1, evidence: 1, actual: 1, usedLocator: 1 } satisfies Record<keyof StepReport, 1>;
    const exec = { stepIndex: 1, timeoutMs: 1, continueOnFail: 1, evidence: 1, label: 1, step: 1 } satisfies Record<keyof StepExecPayload, 1>;
    const stepError = { code: 1, message: 1, triedLocators: 1 } satisfies Record<keyof NonNullable<StepReport['error']>, 1>;
    const tcStep = { otp: 1, label: 1, timeoutMs: 1, continueOnFail: 1, evidence: 1 } satisfies Record<keyof TestCaseStep, 1>;
    expect(keysOf('Capabilities')).to.deep.equal(Object.keys(capabilities).sort());
    expect(keysOf('HelloPayload')).to.deep.equal(Object.keys(hello).sort());
    expect(keysOf('StepResultPayload')).to.deep.equal(Object.keys(report).sort());
    expect(keysOf('StepResultPayload', ['error'])).to.deep.equal(Object.keys(stepError).sort());
    expect(keysOf('StepExecPayload')).to.deep.equal(Object.keys(exec).sort());
    expect(keysOf('TestCaseStep')).to.deep.equal(Object.keys(tcStep).sort());
    expect(otpSchemasById.get('HelloPayload')!.required).to.deep.equal(['executor', 'capabilities']);
    expect(otpSchemasById.get('StepResultPayload')!.required).to.deep.equal(['stepIndex', 'status']);
  });

  it('uses one Ajv instance with every schema compiled', () => {
    for (const s of otpSchemas) expect(otpAjv.getSchema(String(s.$id)), String(s.$id)).to.be.a('function');
    expect(() => validatorFor('NoSuchSchema')).to.throw(/unknown OTP schema id/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: Locator', () => {
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
    expectValid(checkLocator({ candidates: [{ by: 'testid', value: 'save' }, { by: 'text', value: 'Save', within: { by: 'css', value: 'form' } }] }));
  });

  it('rejects an unknown strategy with the list of strategies', () => {
    expectOnly(checkLocator({ by: 'id', value: 'x' }, 'locator'), 'locator.by', 'must be one of: testid, role, label, placeholder, text, alt, title, css, xpath');
  });

  it('rejects missing value, negative nth, non-boolean exact and unknown members', () => {
    expectOnly(checkLocator({ by: 'css' }), 'value', 'is required');
    expectOnly(checkLocator({ by: 'css', value: 'a', nth: -1 }), 'nth', 'must be >= 0');
    expectOnly(checkLocator({ by: 'css', value: 'a', nth: 1.5 }), 'nth', 'must be an integer');
    expectOnly(checkLocator({ by: 'css', value: 'a', exact: 'yes' }), 'exact', 'must be a boolean');
    expectOnly(checkLocator({ by: 'css', value: 'a', selector: 'b' }), 'selector', 'unknown property');
  });

  it('reports errors deep inside within', () => {
    expectOnly(checkLocator({ by: 'css', value: 'a', within: { by: 'css', value: 'b', within: { by: 'nope', value: 'c' } } }), 'within.within.by', 'must be one of');
  });

  it('rejects empty candidates, a bad candidate, and candidates mixed with by/value', () => {
    expectOnly(checkLocator({ candidates: [] }), 'candidates', 'must have at least 1 item');
    expectOnly(checkLocator({ candidates: [{ by: 'css', value: 'a' }, { value: 'b' }] }), 'candidates[1].by', 'is required');
    // a candidate is a plain locator: no nested candidates
    expectError(checkLocator({ candidates: [{ candidates: [{ by: 'css', value: 'a' }] }] }), 'candidates[0].candidates', 'unknown property');
    expectError(checkLocator({ by: 'css', value: 'a', candidates: [css('b')] }), 'by', 'unknown property');
  });

  it('rejects a locator that is not an object', () => {
    expectOnly(checkLocator('#save', 'locator'), 'locator', 'must be an object');
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: step actions', () => {
  const loc = css('#target');
  const valid: Record<string, Record<string, unknown>[]> = {
    navigate: [{ url: 'https://example.test/' }, { url: '{{base_url}}/login', waitUntil: 'networkidle' }],
    click: [{ locator: loc }, { locator: { candidates: [loc, { by: 'role', value: 'button', name: 'Go' }] }, modifiers: ['Control', 'Shift'] }],
    dblclick: [{ locator: loc }],
    rightClick: [{ locator: loc }],
    type: [{ locator: loc, text: 'hello' }, { locator: loc, text: '{{secret_1}}', delayMs: 20, clear: true }, { locator: loc, text: '' }],
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
    ['navigate with bad waitUntil', { action: 'navigate', url: '/', waitUntil: 'idle' }, 'otp.waitUntil', 'must be one of: load, domcontentloaded, networkidle, commit'],
    ['click without locator', { action: 'click' }, 'otp.locator', 'is required'],
    ['click with bad modifier', { action: 'click', locator: loc, modifiers: ['Ctrl'] }, 'otp.modifiers[0]', 'must be one of: Alt, Control, Meta, Shift'],
    ['click with unknown member', { action: 'click', locator: loc, button: 'left' }, 'otp.button', 'unknown property'],
    ['dblclick without locator', { action: 'dblclick' }, 'otp.locator', 'is required'],
    ['rightClick with url', { action: 'rightClick', locator: loc, url: '/' }, 'otp.url', 'unknown property'],
    ['type without text', { action: 'type', locator: loc }, 'otp.text', 'is required'],
    ['type with negative delay', { action: 'type', locator: loc, text: 'a', delayMs: -1 }, 'otp.delayMs', 'must be >= 0'],
    ['type with string clear', { action: 'type', locator: loc, text: 'a', clear: 'true' }, 'otp.clear', 'must be a boolean'],
    ['press without key', { action: 'press', locator: loc }, 'otp.key', 'is required'],
    ['select with bad by', { action: 'select', locator: loc, by: 'text', value: 'a' }, 'otp.by', 'must be one of: value, label, index'],
    ['select without by', { action: 'select', locator: loc, value: 'a' }, 'otp.by', 'is required'],
    ['select with boolean value', { action: 'select', locator: loc, by: 'value', value: true }, 'otp.value', 'must be a string or an integer'],
    ['check without locator', { action: 'check' }, 'otp.locator', 'is required'],
    ['uncheck with bad locator', { action: 'uncheck', locator: { by: 'css' } }, 'otp.locator.value', 'is required'],
    ['hover without locator', { action: 'hover' }, 'otp.locator', 'is required'],
    ['scroll into view without locator', { action: 'scroll', into: true }, 'otp.locator', 'is required when into is true'],
    ['scroll with fractional dy', { action: 'scroll', dy: 1.5 }, 'otp.dy', 'must be an integer'],
    ['upload with a bad asset id', { action: 'upload', locator: loc, assetId: 'file.png' }, 'otp.assetId', '"ast_"'],
    ['upload without asset', { action: 'upload', locator: loc }, 'otp.assetId', 'is required'],
    ['wait with nothing', { action: 'wait' }, 'otp', 'must have exactly one of: ms, locator, networkidle'],
    ['wait with two forms', { action: 'wait', ms: 100, locator: loc }, 'otp', 'must have only one of: ms, locator, networkidle (found ms, locator)'],
    ['wait with state but no locator', { action: 'wait', ms: 10, state: 'visible' }, 'otp.locator', 'is required when state is present'],
    ['wait with bad state', { action: 'wait', locator: loc, state: 'gone' }, 'otp.state', 'must be one of: visible, hidden, attached, detached'],
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
    expectOnly(result, 'otp.action', 'unknown action "clik"; expected one of navigate, click, dblclick, rightClick, type, press, select');
    expect(errorsOf(result)[0]!.message).to.contain('assert, eval');
  });

  it('gives one clear message for a missing or non-string action', () => {
    expectOnly(action({ locator: loc }), 'otp.action', 'is required; expected one of navigate, click');
    expectOnly(action({ action: 3 }), 'otp.action', 'must be a string; expected one of navigate');
    expectOnly(validateStepAction('click'), '(root)', 'must be an object');
  });

  it('accepts {{var}} strings in url, text, value, key and expected', () => {
    expectValid(action({ action: 'navigate', url: '{{base_url}}/login?next={{next}}' }));
    expectValid(action({ action: 'type', locator: { by: 'label', value: '{{field_label}}' }, text: '{{user}}@{{domain}}' }));
    expectValid(action({ action: 'press', key: '{{key}}' }));
    expectValid(action({ action: 'assert', kind: 'url', op: 'contains', expected: '{{base_url}}/home' }));
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: assert steps', () => {
  const loc = css('h1');
  const validByKind: Record<string, Record<string, unknown>> = {
    visible: { locator: loc },
    hidden: { locator: loc },
    enabled: { locator: loc },
    disabled: { locator: loc },
    checked: { locator: { candidates: [css('#agree')] } },
    text: { locator: loc, op: 'contains', expected: 'Welcome {{user}}' },
    value: { locator: loc, expected: 'abc' },
    count: { locator: loc, op: 'gt', expected: '2' },
    url: { op: 'matches', expected: '^{{base_url}}/dash' },
    title: { expected: 'Dashboard' },
    attribute: { locator: loc, attribute: 'aria-expanded', expected: 'true' },
  };

  it('has an example for every kind', () => {
    expect(Object.keys(validByKind).sort()).to.deep.equal([...ASSERT_KINDS].sort());
  });

  for (const [kind, rest] of Object.entries(validByKind)) {
    it(`accepts kind ${kind}`, () => expectValid(action({ action: 'assert', kind, ...rest })));
  }

  it('accepts count with equals and lt', () => {
    expectValid(action({ action: 'assert', kind: 'count', locator: loc, op: 'lt', expected: '10' }));
    expectValid(action({ action: 'assert', kind: 'count', locator: loc, expected: '{{n}}' }));
  });

  it('requires expected for the value kinds', () => {
    for (const kind of ['text', 'value', 'count', 'attribute']) {
      const extra = kind === 'attribute' ? { attribute: 'href' } : {};
      expectOnly(action({ action: 'assert', kind, locator: loc, ...extra }), 'otp.expected', `is required when kind is "${kind}"`);
    }
    for (const kind of ['url', 'title']) {
      expectOnly(action({ action: 'assert', kind }), 'otp.expected', `is required when kind is "${kind}"`);
    }
  });

  it('requires a locator for element kinds and refuses one for url and title', () => {
    for (const kind of ['visible', 'hidden', 'enabled', 'disabled', 'checked']) {
      expectOnly(action({ action: 'assert', kind }), 'otp.locator', `is required when kind is "${kind}"`);
    }
    expectOnly(action({ action: 'assert', kind: 'text', expected: 'x' }), 'otp.locator', 'is required when kind is "text"');
    expectOnly(action({ action: 'assert', kind: 'url', expected: '/x', locator: loc }), 'otp.locator', 'is not allowed when kind is "url"');
    expectOnly(action({ action: 'assert', kind: 'title', expected: 'x', locator: loc }), 'otp.locator', 'is not allowed when kind is "title"');
  });

  it('requires attribute for kind attribute only', () => {
    expectOnly(action({ action: 'assert', kind: 'attribute', locator: loc, expected: 'x' }), 'otp.attribute', 'is required when kind is "attribute"');
    expectOnly(action({ action: 'assert', kind: 'text', locator: loc, expected: 'x', attribute: 'href' }), 'otp.attribute', 'is not allowed when kind is "text"');
  });

  it('refuses op and expected on state kinds', () => {
    const errors = errorsOf(action({ action: 'assert', kind: 'visible', locator: loc, op: 'equals', expected: 'yes' }));
    expect(errors).to.deep.equal([
      { field: 'otp.op', message: 'is not allowed when kind is "visible"' },
      { field: 'otp.expected', message: 'is not allowed when kind is "visible"' },
    ]);
  });

  it('allows gt and lt only for count, and count only equals, gt, lt', () => {
    expectOnly(action({ action: 'assert', kind: 'text', locator: loc, op: 'gt', expected: '3' }), 'otp.kind', 'must be "count" when op is "gt"');
    expectOnly(action({ action: 'assert', kind: 'url', op: 'lt', expected: '3' }), 'otp.kind', 'must be "count" when op is "lt"');
    expectOnly(action({ action: 'assert', kind: 'count', locator: loc, op: 'contains', expected: '3' }), 'otp.op', 'must be one of: equals, gt, lt when kind is "count"');
  });

  it('reports an unknown kind or op once', () => {
    expectOnly(action({ action: 'assert', kind: 'exists', locator: loc }), 'otp.kind', 'must be one of: visible, hidden, enabled, disabled, checked, text, value, count, url, title, attribute');
    expectOnly(action({ action: 'assert', kind: 'text', locator: loc, op: 'startsWith', expected: 'a' }), 'otp.op', 'must be one of: equals, contains, matches, gt, lt');
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: test case steps', () => {
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
    expectOnly(validateTestCaseSteps([{ otp: click }, { otp: { action: 'clik' } }]), 'steps[1].otp.action', 'unknown action "clik"');
  });

  it('checks label, timeoutMs, continueOnFail, evidence and extra members', () => {
    expectOnly(validateTestCaseSteps([{ otp: click, label: 'x'.repeat(201) }]), 'steps[0].label', 'at most 200 characters');
    expectValid(validateTestCaseSteps([{ otp: click, label: 'x'.repeat(200) }]));
    expectOnly(validateTestCaseSteps([{ otp: click, timeoutMs: 0 }]), 'steps[0].timeoutMs', 'must be >= 1');
    expectOnly(validateTestCaseSteps([{ otp: click, timeoutMs: 600001 }]), 'steps[0].timeoutMs', 'must be <= 600000');
    expectOnly(validateTestCaseSteps([{ otp: click, continueOnFail: 'no' }]), 'steps[0].continueOnFail', 'must be a boolean');
    expectOnly(validateTestCaseSteps([{ otp: click, evidence: 'onfail' }]), 'steps[0].evidence', 'must be one of: always, onFail, never');
    expectOnly(validateTestCaseSteps([{ otp: click, action: 'click' }]), 'steps[0].action', 'unknown property');
    expectOnly(validateTestCaseSteps([{ label: 'no action' }]), 'steps[0].otp', 'is required');
  });

  it('refuses a non-array and more than 500 steps', () => {
    expectOnly(validateTestCaseSteps({ otp: click }), 'steps', 'must be an array');
    expectOnly(validateTestCaseSteps(Array.from({ length: 501 }, () => ({ otp: click }))), 'steps', 'at most 500 items');
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: inbound frames (executor to service)', () => {
  const hello = (payload: object, extra: Record<string, unknown> = {}) => envelope('hello', { payload, ...extra });
  const helloPayload: HelloPayload = {
    executor: 'runner',
    name: 'ci-runner',
    version: '2.1.0',
    capabilities: { record: false, replay: true, screenshot: true, upload: true, crossOrigin: false, eval: true, maxParallel: 4 },
    projectId: 'prj_01hx7q9c2m3n4p5r6s7t8v9w0y',
  };
  const report: StepReport = {
    stepIndex: 2,
    status: 'fail',
    durationMs: 5012,
    error: { code: 'E_LOCATOR_NOT_FOUND', message: 'no match', triedLocators: [{ by: 'testid', value: 'save' }, { by: 'text', value: 'Save' }] },
    evidence: { screenshotAssetId: 'ast_01hx7q9c2m3n4p5r6s7t8v9w0y', consoleErrors: ['TypeError: x is undefined'] },
    actual: 'Cancel',
  };
  const stepResult = (payload: unknown, extra: Record<string, unknown> = {}) =>
    envelope('step.result', { sessionId: SESSION, runId: RUN, ref: 'msg_exec1', payload, ...extra });

  it('accepts hello, minimal and full, and returns the frame itself', () => {
    const frame = hello({ ...helloPayload });
    const result = validateInbound(frame);
    expectValid(result);
    if (result.ok) {
      expect(result.message).to.equal(frame);
      expect(result.message.type).to.equal('hello');
    }
    expectValid(validateInbound(hello({ executor: 'extension', capabilities: {} })));
  });

  it('rejects hello with a bad capability, naming the exact field', () => {
    const frame = hello({ executor: 'runner', capabilities: { maxParallel: 0 } });
    expectOnly(validateInbound(frame), 'payload.capabilities.maxParallel', 'must be >= 1');
    expectOnly(validateInbound(hello({ executor: 'runner', capabilities: { maxParallel: 65 } })), 'payload.capabilities.maxParallel', 'must be <= 64');
    expectOnly(validateInbound(hello({ executor: 'runner', capabilities: { eval: 'yes' } })), 'payload.capabilities.eval', 'must be a boolean');
    expectOnly(validateInbound(hello({ executor: 'runner', capabilities: { video: true } })), 'payload.capabilities.video', 'unknown property');
  });

  it('rejects hello without executor or capabilities, with a bad projectId, or with a sessionId', () => {
    expectOnly(validateInbound(hello({ capabilities: {} })), 'payload.executor', 'is required');
    expectOnly(validateInbound(hello({ executor: 'runner' })), 'payload.capabilities', 'is required');
    expectOnly(validateInbound(hello({ ...helloPayload, projectId: 'project-1' })), 'payload.projectId', '"prj_"');
    expectOnly(validateInbound(hello(helloPayload, { sessionId: SESSION })), 'sessionId', 'is not allowed in a hello frame');
    expectOnly(validateInbound(envelope('hello')), 'payload', 'is required');
  });

  it('checks the envelope members', () => {
    expectOnly(validateInbound(hello(helloPayload, { otp: 'v1' })), 'otp', 'must be a version major.minor');
    expectValid(validateInbound(hello(helloPayload, { otp: '2.0' })), 'another version is well-formed (the session answers E_VERSION)');
    expectOnly(validateInbound(hello(helloPayload, { id: '42' })), 'id', '"msg_"');
    expectOnly(validateInbound(hello(helloPayload, { id: `msg_${'a'.repeat(65)}` })), 'id', '"msg_"');
    expectOnly(validateInbound(hello(helloPayload, { ts: '2024-05-01 12:00' })), 'ts', 'ISO 8601');
    expectOnly(validateInbound(hello(helloPayload, { extra: 1 })), 'extra', 'unknown property');
    const noId: Record<string, unknown> = hello(helloPayload);
    delete noId.id;
    expectOnly(validateInbound(noId), 'id', 'is required');
  });

  it('accepts pong and ack with or without an empty payload', () => {
    expectValid(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_ping1' })));
    expectValid(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_ping1', payload: {} })));
    expectValid(validateInbound(envelope('ack', { sessionId: SESSION, ref: 'msg_start1', runId: RUN })));
    expectValid(validateInbound(envelope('ack', { sessionId: SESSION, ref: 'msg_rec1', payload: {} })));
  });

  it('rejects pong and ack without sessionId or ref, or with payload content', () => {
    expectOnly(validateInbound(envelope('pong', { ref: 'msg_ping1' })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('pong', { sessionId: SESSION })), 'ref', 'is required');
    expectOnly(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_p', runId: RUN })), 'runId', 'is not allowed in a pong frame');
    expectOnly(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_p', payload: { t: 1 } })), 'payload.t', 'unknown property');
    expectOnly(validateInbound(envelope('ack', { ref: 'msg_start1' })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('ack', { sessionId: SESSION })), 'ref', 'is required');
    expectOnly(validateInbound(envelope('ack', { sessionId: 'sess_1', ref: 'msg_a' })), 'sessionId', '"ots_"');
  });

  it('accepts and rejects error frames', () => {
    expectValid(validateInbound(envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL', message: 'browser crashed' } })));
    expectValid(validateInbound(envelope('error', { sessionId: SESSION, ref: 'msg_x', runId: RUN, payload: { code: 'E_INTERNAL', message: 'm', details: { pid: 4 } } })));
    expectOnly(validateInbound(envelope('error', { payload: { code: 'E_INTERNAL', message: 'm' } })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL' } })), 'payload.message', 'is required');
    expectOnly(validateInbound(envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL', message: 'm', stack: 's' } })), 'payload.stack', 'unknown property');
  });

  it('accepts step.result, minimal and full', () => {
    expectValid(validateInbound(stepResult(report)));
    expectValid(validateInbound(stepResult({ stepIndex: 0, status: 'pass', durationMs: 3, usedLocator: { by: 'role', value: 'link', name: 'Home', within: css('nav') } })));
    for (const status of ['pass', 'fail', 'skip', 'error']) expectValid(validateInbound(stepResult({ stepIndex: 1, status })), status);
  });

  it('rejects step.result with a bad status, missing ids, or bad members', () => {
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'passed' })), 'payload.status', 'must be one of: pass, fail, skip, error');
    expectOnly(validateInbound(stepResult({ status: 'pass' })), 'payload.stepIndex', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: -1, status: 'pass' })), 'payload.stepIndex', 'must be >= 0');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass', screenshot: 'x' })), 'payload.screenshot', 'unknown property');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'fail', error: { code: 'E_TIMEOUT' } })), 'payload.error.message', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'fail', error: { code: 'E_X', message: 'm', triedLocators: [{ by: 'css' }] } })), 'payload.error.triedLocators[0].value', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass', evidence: { screenshotAssetId: 'img_1' } })), 'payload.evidence.screenshotAssetId', '"ast_"');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass', evidence: { consoleErrors: Array(101).fill('e') } })), 'payload.evidence.consoleErrors', 'at most 100 items');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass', actual: 'x'.repeat(100001) })), 'payload.actual', 'at most 100000 characters');
    expectError(validateInbound(stepResult({ stepIndex: 0, status: 'pass', usedLocator: { candidates: [css('a')] } })), 'payload.usedLocator.candidates', 'unknown property');
    const noSession = stepResult({ stepIndex: 0, status: 'pass' });
    delete noSession.sessionId;
    expectOnly(validateInbound(noSession), 'sessionId', 'is required');
    const noRun = stepResult({ stepIndex: 0, status: 'pass' });
    delete noRun.runId;
    expectOnly(validateInbound(noRun), 'runId', 'is required');
    const noRef = stepResult({ stepIndex: 0, status: 'pass' });
    delete noRef.ref;
    expectOnly(validateInbound(noRef), 'ref', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass' }, { runId: 'run_1' })), 'runId', '"otr_"');
  });

  it('accepts and rejects event.recorded', () => {
    const step = { otp: { action: 'type', locator: { candidates: [{ by: 'testid', value: 'email' }, css('#email')] }, text: '{{secret_1}}' }, label: 'Type e-mail' };
    expectValid(validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: { recordingId: 'rec_1', step, at: TS } })));
    expectValid(validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: { step: { otp: { action: 'navigate', url: 'https://a.test/' } } } })));
    expectOnly(validateInbound(envelope('event.recorded', { payload: { step } })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: {} })), 'payload.step', 'is required');
    expectOnly(validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: { step: { otp: { action: 'tap' } } } })), 'payload.step.otp.action', 'unknown action "tap"');
    expectOnly(validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: { step, at: 'now' } })), 'payload.at', 'ISO 8601');
  });

  it('explains a frame that is not an object or has no usable type', () => {
    expectOnly(validateInbound(null), '(root)', 'must be a JSON object');
    expectOnly(validateInbound([envelope('pong')]), '(root)', 'must be a JSON object');
    expectOnly(validateInbound('hello'), '(root)', 'must be a JSON object');
    expectOnly(validateInbound({ otp: '1.0' }), 'type', 'is required; expected one of hello, pong, ack, error, step.result, event.recorded');
    expectOnly(validateInbound({ type: 7 }), 'type', 'must be a string');
    expectOnly(validateInbound({ type: 'helo' }), 'type', 'unknown type "helo"; expected one of hello, pong');
    expectOnly(validateInbound({ type: 'step.exec' }), 'type', '"step.exec" is sent by the service, not by the executor');
    expectOnly(validateInbound({ type: '__proto__' }), 'type', 'unknown type "__proto__"');
  });
});

// ---------------------------------------------------------------------------------------------

describe('OTP schemas: outbound frames (service to executor)', () => {
  const stepExec: StepExecPayload = { stepIndex: 0, timeoutMs: 30000, continueOnFail: false, evidence: 'onFail', label: 'Open', step: { action: 'navigate', url: 'https://a.test/login' } };
  const frames: Record<string, Record<string, unknown>> = {
    welcome: envelope('welcome', {
      ref: 'msg_hello1',
      sessionId: SESSION,
      payload: { sessionId: SESSION, serverTime: TS, keepaliveSec: 25, limits: { maxFrameBytes: 1048576, maxSteps: 500, stepTimeoutMs: 30000, maxParallel: 4, keepaliveSec: 25 } },
    }),
    ping: envelope('ping', { sessionId: SESSION }),
    'run.start': envelope('run.start', {
      sessionId: SESSION,
      runId: RUN,
      payload: { runId: RUN, vars: { base_url: 'https://a.test' }, allowedOrigins: ['https://a.test'], testCases: [{ id: 'tc_1', title: 'Login', steps: 3 }], totalSteps: 3, defaults: { stepTimeoutMs: 30000 } },
    }),
    'step.exec': envelope('step.exec', { sessionId: SESSION, runId: RUN, payload: stepExec }),
    'run.cancel': envelope('run.cancel', { sessionId: SESSION, runId: RUN, payload: { runId: RUN, reason: 'asked' } }),
    'run.finished': envelope('run.finished', { sessionId: SESSION, runId: RUN, payload: { runId: RUN, status: 'passed', passed: 3, failed: 0, skipped: 0, total: 3, durationMs: 1200 } }),
    'record.start': envelope('record.start', { sessionId: SESSION, payload: { recordingId: 'rec_1' } }),
    'record.stop': envelope('record.stop', { sessionId: SESSION, payload: { recordingId: 'rec_1' } }),
    ack: envelope('ack', { sessionId: SESSION, ref: 'msg_ev1' }),
    error: envelope('error', { ref: 'msg_bad', payload: { code: 'E_INVALID_FRAME', message: 'bad frame', details: { errors: [] } } }),
  };

  it('has an example for every outbound type', () => {
    expect(Object.keys(frames).sort()).to.deep.equal([...OUTBOUND_TYPES].sort());
  });

  for (const [type, frame] of Object.entries(frames)) {
    it(`accepts ${type}`, () => expectValid(validateOutbound(frame), type));
  }

  it('rejects bad service frames', () => {
    expectOnly(validateOutbound(envelope('welcome', { payload: (frames.welcome!.payload as object) })), 'ref', 'is required');
    expectOnly(
      validateOutbound({ ...frames['run.finished']!, payload: { ...(frames['run.finished']!.payload as object), status: 'pass' } }),
      'payload.status',
      'must be one of: passed, failed, cancelled, error',
    );
    expectOnly(validateOutbound({ ...frames['step.exec']!, payload: { ...stepExec, step: { action: 'navigate' } } }), 'payload.step.url', 'is required');
    expectOnly(validateOutbound({ ...frames['run.start']!, payload: { ...(frames['run.start']!.payload as object), vars: { n: 1 } } }), 'payload.vars.n', 'must be a string');
    expectOnly(validateOutbound(envelope('error', { payload: { code: 'E_WHATEVER', message: 'm' } })), 'payload.code', 'must be one of: E_AUTH');
    expectOnly(validateOutbound(envelope('ping')), 'sessionId', 'is required');
    expectOnly(validateOutbound({ type: 'pong' }), 'type', '"pong" is sent by the executor, not by the service');
  });
});

// ---------------------------------------------------------------------------------------------

describe('formatErrors', () => {
  it('returns nothing for no errors', () => {
    expect(formatErrors(null)).to.deep.equal([]);
    expect(formatErrors([])).to.deep.equal([]);
  });

  it('builds paths with a prefix, array indexes and escaped keys', () => {
    const fn = otpAjv.getSchema('RunStartPayload')!;
    expect(fn({ runId: RUN, vars: { 'a/b': 1 }, allowedOrigins: [], testCases: [{ id: 'tc', title: 't', steps: -1 }], totalSteps: 0, defaults: { stepTimeoutMs: 1 } })).to.equal(false);
    expect(formatErrors(fn.errors, 'payload')).to.deep.equal([
      { field: 'payload.vars.a/b', message: 'must be a string' },
      { field: 'payload.testCases[0].steps', message: 'must be >= 0' },
    ]);
  });

  it('turns a discriminator failure into one message instead of one per branch', () => {
    const fn = otpAjv.getSchema('StepAction')!;
    expect(fn({ action: 'scrol', dy: 5 })).to.equal(false);
    expect(fn.errors!.length).to.be.greaterThan(0);
    expect(formatErrors(fn.errors)).to.deep.equal([
      { field: 'action', message: `unknown action "scrol"; expected one of ${ACTION_NAMES.join(', ')}` },
    ]);
  });
});
