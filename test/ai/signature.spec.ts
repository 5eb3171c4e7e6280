// Failure signatures: the same cause reads the same on other runs and cases, different causes do not.
// The messages are ones otp-runner and Playwright really write.
import { expect } from 'chai';
import { locatorIdentity, normaliseMessage, signatureOf, signatureParts } from '../../src/ai/signature.js';

const sig = (code: string, action: unknown, message: string) => signatureOf(signatureParts({ code, action, message }));

describe('failure signatures', () => {
  describe('normaliseMessage', () => {
    const cases: Array<[string, string]> = [
      ['expected text to equal "Total: 42.50 €", got "Total: 40.00 €"', 'expected text to equal "<v>", got "<v>"'],
      ['no element matched role "button" name "Save"', 'no element matched role "<v>" name "<v>"'],
      ['the step did not finish within its 5000 ms', 'the step did not finish within its <n>'],
      [
        'page.goto: Timeout 30000ms exceeded.\nCall log:\n  - navigating to "http://127.0.0.1:41235/checkout?session=abc123&t=1700000000", waiting until "load"',
        'page.goto: Timeout <n> exceeded. Call log: - navigating to "http://<n>:<n>/checkout", waiting until "<v>"',
      ],
      ['order 3f2a9c0e-1b2c-4d5e-8f90-123456789abc not found', 'order <id> not found'],
      ['run otr_01hzx3y4k5m6n7p8q9r0s1t2v3 was cancelled', 'run <id> was cancelled'],
      ['deployed at 2026-11-25T12:35:43.123Z by build a94f3c2e91bd7', 'deployed at <time> by build <id>'],
      ["element isn't visible: it's hidden by 'overlay-17'", "element isn't visible: it's hidden by '<v>'"],
      [
        'page.goto: net::ERR_CONNECTION_REFUSED at https://shop.example.com/orders/4711?ref=mail#top',
        'page.goto: net::ERR_CONNECTION_REFUSED at https://shop.example.com/orders/<id>',
      ],
    ];
    for (const [message, expected] of cases) {
      it(`normalises ${JSON.stringify(message.slice(0, 60))}`, () =>
        expect(normaliseMessage(message)).to.equal(expected));
    }

    it('keeps the words that say what went wrong', () => {
      expect(
        normaliseMessage(
          'the element was found but the action did not complete in time: locator.click: Timeout 2000ms exceeded.',
        ),
      ).to.equal('the element was found but the action did not complete in time: locator.click: Timeout <n> exceeded.');
    });
  });

  describe('locatorIdentity', () => {
    it('names strategy, value, name, index, parent and frame', () => {
      expect(
        locatorIdentity({
          by: 'role',
          value: 'button',
          name: 'Save',
          nth: 1,
          within: { by: 'testid', value: 'cart' },
          frame: '#pay',
        }),
      ).to.equal('frame(#pay) >> testid=cart >> role=button[name=Save][nth=1]');
    });
    it('identifies candidates by the first, and no locator by nothing', () => {
      expect(
        locatorIdentity({
          candidates: [
            { by: 'testid', value: 'save' },
            { by: 'text', value: 'Save' },
          ],
        }),
      ).to.equal('testid=save');
      expect(locatorIdentity(undefined)).to.equal('');
    });
  });

  describe('signatureOf', () => {
    const assertTotal = {
      action: 'assert',
      kind: 'text',
      locator: { by: 'testid', value: 'total' },
      expected: 'Total: 42',
    };
    it('is the same for the same cause with other values, on another run or case', () => {
      const a = sig('E_ASSERT_FAILED', assertTotal, 'expected text to equal "Total: 42", got "Total: 40"');
      const b = sig(
        'E_ASSERT_FAILED',
        { ...assertTotal, expected: 'Total: 17' },
        'expected text to equal "Total: 17", got "Total: 9"',
      );
      expect(a)
        .to.match(/^sig_[0-9a-f]{20}$/)
        .and.to.equal(b);
    });
    it('differs when the code, the action, the locator or the words differ', () => {
      const base = sig('E_ASSERT_FAILED', assertTotal, 'expected text to equal "a", got "b"');
      expect(sig('E_TIMEOUT', assertTotal, 'expected text to equal "a", got "b"')).to.not.equal(base);
      expect(
        sig('E_ASSERT_FAILED', { ...assertTotal, kind: 'value' }, 'expected text to equal "a", got "b"'),
      ).to.not.equal(base);
      expect(
        sig(
          'E_ASSERT_FAILED',
          { ...assertTotal, locator: { by: 'testid', value: 'subtotal' } },
          'expected text to equal "a", got "b"',
        ),
      ).to.not.equal(base);
      expect(sig('E_ASSERT_FAILED', assertTotal, 'expected text to contain "a", got "b"')).to.not.equal(base);
    });
    it('does not change with the port a test server happened to get', () => {
      const nav = { action: 'navigate', url: '{{base}}/shop' };
      expect(sig('E_INTERNAL', nav, 'page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:38111/shop')).to.equal(
        sig('E_INTERNAL', nav, 'page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:40022/shop'),
      );
    });
  });
});
