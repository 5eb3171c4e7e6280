// The rules of assert steps that go beyond member types: which kinds need a locator, expected,
// attribute, and which ops a kind takes; each broken rule is reported with its condition.
import { expect } from 'chai';
import { ASSERT_KINDS } from '../../src/otp/protocol/schemas/index.js';
import { action, css, errorsOf, expectOnly, expectValid } from './helpers.js';

describe('Assert steps: locator, expected, attribute and op depend on the kind', () => {
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
      expectOnly(
        action({ action: 'assert', kind, locator: loc, ...extra }),
        'otp.expected',
        `is required when kind is "${kind}"`,
      );
    }
    for (const kind of ['url', 'title']) {
      expectOnly(action({ action: 'assert', kind }), 'otp.expected', `is required when kind is "${kind}"`);
    }
  });

  it('requires a locator for element kinds and refuses one for url and title', () => {
    for (const kind of ['visible', 'hidden', 'enabled', 'disabled', 'checked']) {
      expectOnly(action({ action: 'assert', kind }), 'otp.locator', `is required when kind is "${kind}"`);
    }
    expectOnly(
      action({ action: 'assert', kind: 'text', expected: 'x' }),
      'otp.locator',
      'is required when kind is "text"',
    );
    expectOnly(
      action({ action: 'assert', kind: 'url', expected: '/x', locator: loc }),
      'otp.locator',
      'is not allowed when kind is "url"',
    );
    expectOnly(
      action({ action: 'assert', kind: 'title', expected: 'x', locator: loc }),
      'otp.locator',
      'is not allowed when kind is "title"',
    );
  });

  it('requires attribute for kind attribute only', () => {
    expectOnly(
      action({ action: 'assert', kind: 'attribute', locator: loc, expected: 'x' }),
      'otp.attribute',
      'is required when kind is "attribute"',
    );
    expectOnly(
      action({ action: 'assert', kind: 'text', locator: loc, expected: 'x', attribute: 'href' }),
      'otp.attribute',
      'is not allowed when kind is "text"',
    );
  });

  it('refuses op and expected on state kinds', () => {
    const errors = errorsOf(action({ action: 'assert', kind: 'visible', locator: loc, op: 'equals', expected: 'yes' }));
    expect(errors).to.deep.equal([
      { field: 'otp.op', message: 'is not allowed when kind is "visible"' },
      { field: 'otp.expected', message: 'is not allowed when kind is "visible"' },
    ]);
  });

  it('allows gt and lt only for count, and count only equals, gt, lt', () => {
    expectOnly(
      action({ action: 'assert', kind: 'text', locator: loc, op: 'gt', expected: '3' }),
      'otp.kind',
      'must be "count" when op is "gt"',
    );
    expectOnly(
      action({ action: 'assert', kind: 'url', op: 'lt', expected: '3' }),
      'otp.kind',
      'must be "count" when op is "lt"',
    );
    expectOnly(
      action({ action: 'assert', kind: 'count', locator: loc, op: 'contains', expected: '3' }),
      'otp.op',
      'must be one of: equals, gt, lt when kind is "count"',
    );
  });

  it('reports an unknown kind or op once', () => {
    expectOnly(
      action({ action: 'assert', kind: 'exists', locator: loc }),
      'otp.kind',
      'must be one of: visible, hidden, enabled, disabled, checked, text, value, count, url, title, attribute',
    );
    expectOnly(
      action({ action: 'assert', kind: 'text', locator: loc, op: 'startsWith', expected: 'a' }),
      'otp.op',
      'must be one of: equals, contains, matches, gt, lt',
    );
  });
});
