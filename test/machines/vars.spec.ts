import { expect } from 'chai';
import { addOutcomes, countOutcomes, emptyCounts, isFailure, verdict } from '../../machines/counts.js';
import type { StepAction } from '../../machines/types.js';
import { fillVars, referencedVars, requiredCapability } from '../../machines/vars.js';

describe('machines/vars', () => {
  describe('fillVars', () => {
    it('fills every string value, at any depth, including nested locators and arrays', () => {
      const action: StepAction = {
        action: 'type',
        locator: {
          candidates: [{ css: 'input[name="{{field}}"]' }, { role: 'textbox', name: '{{ label }}' }],
          frame: { css: '#{{frame}}' },
        },
        text: '{{user}}@{{domain}}',
        delayMs: 20,
        clear: true,
        extra: null,
      };
      const filled = fillVars(action, {
        field: 'email',
        label: 'E-mail',
        frame: 'login',
        user: 'ann',
        domain: 'example.com',
      });
      expect(filled).to.deep.equal({
        action: 'type',
        locator: {
          candidates: [{ css: 'input[name="email"]' }, { role: 'textbox', name: 'E-mail' }],
          frame: { css: '#login' },
        },
        text: 'ann@example.com',
        delayMs: 20,
        clear: true,
        extra: null,
      });
    });

    it('leaves unknown names as written and does not modify its input', () => {
      const action: StepAction = { action: 'navigate', url: 'https://{{host}}/{{path}}' };
      const filled = fillVars(action, { host: 'example.com' });
      expect(filled).to.deep.equal({ action: 'navigate', url: 'https://example.com/{{path}}' });
      expect(action.url).to.equal('https://{{host}}/{{path}}');
      expect(filled).to.not.equal(action);
    });

    it('does not rescan filled values and ignores inherited object members', () => {
      const filled = fillVars(
        { action: 'type', text: '{{a}} {{constructor}} {{toString}}' },
        { a: '{{b}}', b: 'never' },
      );
      expect(filled.text).to.equal('{{b}} {{constructor}} {{toString}}');
    });

    it('answers the action itself when there is nothing to fill, and copies only the parts that change', () => {
      const locator = {
        candidates: [
          { by: 'css', value: '#a' },
          { by: 'text', value: 'Hi {{user}}' },
        ],
      };
      const within = { by: 'css', value: 'form' };
      const plain: StepAction = { action: 'click', locator: { by: 'css', value: '#go', within } };
      expect(fillVars(plain, { user: 'ada' })).to.equal(plain);
      const action: StepAction = { action: 'click', locator, frame: within };
      const filled = fillVars(action, { user: 'ada' });
      expect(filled).to.deep.equal({
        action: 'click',
        locator: {
          candidates: [
            { by: 'css', value: '#a' },
            { by: 'text', value: 'Hi ada' },
          ],
        },
        frame: within,
      });
      expect(filled.frame).to.equal(within);
      expect((filled.locator as any).candidates[0]).to.equal(locator.candidates[0]);
      expect(locator.candidates[1]!.value).to.equal('Hi {{user}}');
    });

    it('keeps keys unchanged', () => {
      const filled = fillVars({ action: 'x', '{{k}}': '{{k}}' }, { k: 'v' });
      expect(filled).to.deep.equal({ action: 'x', '{{k}}': 'v' });
    });
  });

  describe('referencedVars', () => {
    it('lists each name once, in order of first use, from nested values', () => {
      const action: StepAction = {
        action: 'type',
        locator: { candidates: [{ css: '#{{field}}' }, { text: '{{user}} {{field}}' }] },
        text: '{{secret_1}}{{ user }}',
      };
      expect(referencedVars(action)).to.deep.equal(['field', 'user', 'secret_1']);
    });

    it('is empty when no variable is used', () => {
      expect(referencedVars({ action: 'click', locator: { css: '#go' } })).to.deep.equal([]);
    });
  });

  describe('requiredCapability', () => {
    it('maps eval, screenshot and upload to their capability and everything else to null', () => {
      expect(requiredCapability({ action: 'eval', script: '1' })).to.equal('eval');
      expect(requiredCapability({ action: 'screenshot', fullPage: true })).to.equal('screenshot');
      expect(requiredCapability({ action: 'upload', locator: 'input', assetId: 'ast_1' })).to.equal('upload');
      for (const name of ['navigate', 'click', 'type', 'assert', 'wait', 'press']) {
        expect(requiredCapability({ action: name }), name).to.equal(null);
      }
    });
  });
});

describe('machines/counts', () => {
  it('counts pass, fail + error and skip, with total given', () => {
    const statuses = ['pass', 'fail', 'error', 'skip', 'skip', 'pass'] as const;
    expect(
      countOutcomes(
        statuses.map((status) => ({ status })),
        7,
      ),
    ).to.deep.equal({
      passed: 2,
      failed: 2,
      skipped: 2,
      total: 7,
    });
  });

  it('adds to existing counts without changing them', () => {
    const base = emptyCounts(3);
    const next = addOutcomes(base, [{ status: 'pass' }, { status: 'error' }]);
    expect(base).to.deep.equal({ passed: 0, failed: 0, skipped: 0, total: 3 });
    expect(next).to.deep.equal({ passed: 1, failed: 1, skipped: 0, total: 3 });
  });

  it('passes only when nothing failed or errored', () => {
    expect(verdict({ passed: 1, failed: 0, skipped: 5, total: 6 })).to.equal('passed');
    expect(verdict({ passed: 0, failed: 0, skipped: 0, total: 0 })).to.equal('passed');
    expect(verdict({ passed: 5, failed: 1, skipped: 0, total: 6 })).to.equal('failed');
    expect(isFailure('fail')).to.equal(true);
    expect(isFailure('error')).to.equal(true);
    expect(isFailure('skip')).to.equal(false);
    expect(isFailure('pass')).to.equal(false);
  });
});
