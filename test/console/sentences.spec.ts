// The step sentence: every action, locator strategy and assert kind of the protocol reads as English.
import { expect } from 'chai';
import { LOCATOR_STRATEGIES } from '../../src/otp/protocol/schemas/locator.js';
import { ACTION_NAMES, ASSERT_KINDS } from '../../src/otp/protocol/schemas/step-vocabulary.js';
import { locatorPhrase, stepSentence } from '../../src/otp/protocol/sentences.js';

const save = { by: 'role', value: 'button', name: 'Save' } as const;

describe('Console: a step as a sentence', () => {
  it('writes each of the 16 actions', () => {
    const examples: Record<(typeof ACTION_NAMES)[number], [object, string]> = {
      navigate: [{ url: '{{base}}/login' }, 'go to “{{base}}/login”'],
      click: [{ locator: save }, 'click the button named “Save”'],
      dblclick: [{ locator: save }, 'double-click the button named “Save”'],
      rightClick: [{ locator: save }, 'right-click the button named “Save”'],
      type: [
        { locator: { by: 'label', value: 'Email' }, text: '{{user}}', clear: true },
        'clear and type “{{user}}” into the field labelled “Email”',
      ],
      press: [{ key: 'Enter' }, 'press Enter'],
      select: [
        { locator: { by: 'label', value: 'Country' }, by: 'label', value: 'France' },
        'choose the option labelled “France” in the field labelled “Country”',
      ],
      check: [{ locator: { by: 'label', value: 'I agree' } }, 'check the field labelled “I agree”'],
      uncheck: [{ locator: { by: 'label', value: 'News' } }, 'uncheck the field labelled “News”'],
      hover: [{ locator: { by: 'text', value: 'Menu' } }, 'hover over the element with text “Menu”'],
      scroll: [{ dy: 400 }, 'scroll the page by 400 px down'],
      upload: [
        { locator: { by: 'testid', value: 'file' }, assetId: 'ast_1' },
        'upload the asset ast_1 into the element with test id “file”',
      ],
      wait: [
        { locator: { by: 'text', value: 'Done' }, state: 'hidden' },
        'wait until the element with text “Done” is hidden',
      ],
      screenshot: [{ fullPage: true }, 'take a screenshot of the whole page'],
      assert: [{ kind: 'visible', locator: save }, 'check that the button named “Save” is visible'],
      eval: [{ script: 'return 1' }, 'run a script (8 characters)'],
    };
    expect(Object.keys(examples)).to.have.members([...ACTION_NAMES]);
    for (const [action, [params, sentence]] of Object.entries(examples))
      expect(stepSentence({ action, ...params } as never), action).to.equal(sentence);
    expect(stepSentence({ action: 'scroll', locator: save, into: true } as never)).to.equal(
      'scroll the button named “Save” into view',
    );
    expect(stepSentence({ action: 'wait', ms: 500 } as never)).to.equal('wait 500 ms');
    expect(stepSentence({ action: 'wait', networkidle: true } as never)).to.equal('wait until the network is idle');
    expect(stepSentence({ action: 'click', locator: save, modifiers: ['Control', 'Shift'] } as never)).to.equal(
      'click the button named “Save” holding Control+Shift',
    );
  });

  it('names an element by each of the 9 locator strategies, nested, in a frame, by index, or from candidates', () => {
    const phrases: Record<(typeof LOCATOR_STRATEGIES)[number], string> = {
      testid: 'the element with test id “v”',
      role: 'the v',
      label: 'the field labelled “v”',
      placeholder: 'the field with placeholder “v”',
      text: 'the element with text “v”',
      alt: 'the image with alt text “v”',
      title: 'the element titled “v”',
      css: 'the element matching CSS “v”',
      xpath: 'the element at XPath “v”',
    };
    expect(Object.keys(phrases)).to.have.members([...LOCATOR_STRATEGIES]);
    for (const [by, phrase] of Object.entries(phrases))
      expect(locatorPhrase({ by, value: 'v' } as never), by).to.equal(phrase);
    expect(
      locatorPhrase({
        by: 'role',
        value: 'link',
        name: 'Home',
        exact: true,
        nth: 1,
        within: { by: 'css', value: 'nav' },
        frame: '#app',
      }),
    ).to.equal(
      'match number 2 of the link named exactly “Home” inside the element matching CSS “nav” in the frame “#app”',
    );
    expect(locatorPhrase({ candidates: [{ by: 'testid', value: 'save' }, save] })).to.equal(
      'the element with test id “save” (or the button named “Save”)',
    );
  });

  it('words each of the 11 assert kinds with its comparison', () => {
    const heading = { by: 'role', value: 'heading' };
    const sentences: Record<(typeof ASSERT_KINDS)[number], [object, string]> = {
      visible: [{ locator: heading }, 'check that the heading is visible'],
      hidden: [{ locator: heading }, 'check that the heading is hidden'],
      enabled: [{ locator: save }, 'check that the button named “Save” is enabled'],
      disabled: [{ locator: save }, 'check that the button named “Save” is disabled'],
      checked: [{ locator: { by: 'label', value: 'Terms' } }, 'check that the field labelled “Terms” is checked'],
      text: [
        { locator: heading, op: 'contains', expected: 'Welcome' },
        'check that the text of the heading contains “Welcome”',
      ],
      value: [
        { locator: { by: 'label', value: 'Email' }, expected: 'a@b.c' },
        'check that the value of the field labelled “Email” is “a@b.c”',
      ],
      count: [
        { locator: { by: 'role', value: 'row' }, op: 'gt', expected: '3' },
        'check that the count of the row is more than 3',
      ],
      url: [{ op: 'matches', expected: '/thanks$' }, 'check that the page address matches the pattern “/thanks$”'],
      title: [{ expected: 'Cart' }, 'check that the page title is “Cart”'],
      attribute: [
        { locator: save, attribute: 'aria-busy', expected: 'false' },
        'check that the “aria-busy” attribute of the button named “Save” is “false”',
      ],
    };
    expect(Object.keys(sentences)).to.have.members([...ASSERT_KINDS]);
    for (const [kind, [params, sentence]] of Object.entries(sentences))
      expect(stepSentence({ action: 'assert', kind, ...params } as never), kind).to.equal(sentence);
  });
});
