// The conformance corpus: one table of pages and steps that both executors (otp-runner and the
// extension) run through the service, each expected to give the same status, code, actual,
// usedLocator and triedLocators (counts, visible, enabled) for every step. It covers every action,
// every assert kind and op, every locator strategy with name, exact, nth, within, frame and
// candidates, open shadow roots, variables and secrets, evidence, and the failures a step can end
// with. `want` is what the step must give (pass, or its error code): a sanity check of the corpus
// itself, so that two executors agreeing on nonsense still fails.

export interface CorpusStep {
  otp: Record<string, unknown>;
  want?: string;
  timeoutMs?: number;
  evidence?: 'always' | 'onFail' | 'never';
}

export interface CorpusCase {
  name: string;
  steps: CorpusStep[];
  /** Run body beyond the test case (vars, allowedOrigins). */
  body?: (site: { origin: string }) => Record<string, unknown>;
}

const css = (value: string, extra: Record<string, unknown> = {}) => ({ by: 'css', value, ...extra });
const s = (otp: Record<string, unknown>, want = 'pass', extra: Partial<CorpusStep> = {}): CorpusStep => ({
  otp,
  want,
  ...extra,
});
const text = (locator: unknown, expected: string, op = 'equals') => ({
  action: 'assert',
  kind: 'text',
  locator,
  op,
  expected,
});
const log = (id: string, expected: string) => s(text(css(`#log-${id}`), expected));
const quick = { timeoutMs: 600 };

export function corpus(url: (path: string) => string, assetId: string): CorpusCase[] {
  return [
    {
      name: 'every action, assert kind and op, every locator strategy',
      steps: [
        s({ action: 'navigate', url: url('/'), waitUntil: 'domcontentloaded' }),
        s({ action: 'assert', kind: 'url', op: 'equals', expected: url('/') }),
        s({ action: 'assert', kind: 'url', op: 'contains', expected: '127.0.0.1' }),
        s({ action: 'assert', kind: 'url', op: 'matches', expected: '^http://127\\.0\\.0\\.1:\\d+/$' }),
        s({ action: 'assert', kind: 'title', expected: 'Runner plan' }),
        s({ action: 'assert', kind: 'title', op: 'contains', expected: 'plan' }),
        s(text({ by: 'testid', value: 'heading' }, 'Runner plan')),
        s({ action: 'click', locator: { by: 'role', value: 'button', name: 'Save', exact: true } }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Save', exact: true },
          expected: '1',
        }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Save' },
          op: 'gt',
          expected: '1',
        }),
        s({ action: 'type', locator: { by: 'label', value: 'Name' }, text: ' one' }),
        s({
          action: 'assert',
          kind: 'value',
          locator: { by: 'label', value: 'Name', exact: true },
          expected: 'pre one',
        }),
        s({
          action: 'type',
          locator: { by: 'placeholder', value: 'Your name' },
          text: 'Grace',
          clear: true,
          delayMs: 5,
        }),
        s({
          action: 'assert',
          kind: 'value',
          locator: { by: 'placeholder', value: 'your NAME' },
          op: 'contains',
          expected: 'rac',
        }),
        s({ action: 'assert', kind: 'value', locator: css('#name'), op: 'matches', expected: '^G\\w+e$' }),
        s({ action: 'dblclick', locator: { by: 'text', value: 'Double me', exact: true } }),
        log('dbl', 'double'),
        s({ action: 'assert', kind: 'visible', locator: { by: 'alt', value: 'Company logo' } }),
        s({
          action: 'assert',
          kind: 'attribute',
          locator: { by: 'title', value: 'Status line' },
          attribute: 'data-state',
          expected: 'ready',
        }),
        s({
          action: 'assert',
          kind: 'attribute',
          locator: css('#status'),
          attribute: 'title',
          op: 'contains',
          expected: 'line',
        }),
        s({ action: 'rightClick', locator: { by: 'xpath', value: '//button[@id="ctx"]' } }),
        log('ctx', 'right'),
        s(text(css('#status'), 'All systems go')),
        s(text(css('#status'), '^All\\s\\w+ go$', 'matches')),
        s(text(css('li.item', { nth: 1 }), 'two')),
        s({ action: 'assert', kind: 'count', locator: css('li.item'), op: 'lt', expected: '4' }),
        s({ action: 'click', locator: { by: 'role', value: 'button', name: 'Edit', within: css('#second') } }),
        log('edit', 'second'),
        s({ action: 'click', locator: { by: 'text', value: 'Edit', nth: 0 } }),
        log('edit', 'first'),
        s({ action: 'click', locator: { by: 'role', value: 'button', name: 'In frame', frame: '#app' } }),
        s(text(css('#out', { frame: '#app' }), 'framed')),
        s({ action: 'click', locator: { candidates: [{ by: 'testid', value: 'no-such-button' }, css('#save')] } }),
        log('clicks', '2'),
        s({ action: 'click', locator: css('#mods'), modifiers: ['Shift', 'Alt'] }),
        log('mods', 'altKey,shiftKey'),
        s({ action: 'press', locator: { by: 'placeholder', value: 'Keys here' }, key: 'Enter' }),
        log('keys', 'Enter'),
        s({ action: 'press', key: 'x' }),
        log('keys', 'x'),
        s({ action: 'select', locator: { by: 'label', value: 'Colour' }, by: 'value', value: 'g' }),
        log('colour', 'g'),
        s({ action: 'select', locator: css('#colour'), by: 'label', value: 'Blue' }),
        s({ action: 'select', locator: css('#colour'), by: 'index', value: 0 }),
        s({ action: 'assert', kind: 'value', locator: css('#colour'), expected: 'r' }),
        s({ action: 'check', locator: { by: 'label', value: 'Agree' } }),
        s({ action: 'assert', kind: 'checked', locator: css('#agree') }),
        s({ action: 'uncheck', locator: { by: 'label', value: 'News' } }),
        s({ action: 'eval', script: 'document.getElementById("news").checked' }),
        s({ action: 'hover', locator: css('#hover') }),
        log('hover', 'hovered'),
        s({ action: 'assert', kind: 'enabled', locator: css('#save') }),
        s({ action: 'assert', kind: 'disabled', locator: css('#off') }),
        s({ action: 'upload', locator: { by: 'label', value: 'Attachment' }, assetId }),
        log('file', 'hello.txt:hello from an asset'),
        s({ action: 'scroll', locator: css('#box'), dy: 120 }),
        s({ action: 'eval', script: 'document.getElementById("box").scrollTop' }),
        s({ action: 'scroll', locator: css('#bottom'), into: true }),
        s({ action: 'eval', script: 'window.scrollY > 2000' }),
        s({ action: 'wait', ms: 20 }),
        s({ action: 'click', locator: css('#show') }),
        s({ action: 'wait', locator: css('#later'), state: 'visible' }),
        s({ action: 'wait', locator: css('#later'), state: 'attached' }),
        s({ action: 'click', locator: css('#remove') }),
        s({ action: 'wait', locator: css('#gone'), state: 'detached' }),
        s({ action: 'wait', locator: css('#gone'), state: 'hidden' }),
        s({ action: 'assert', kind: 'hidden', locator: css('#gone') }),
        s({ action: 'wait', networkidle: true }),
        s({ action: 'screenshot', fullPage: true }),
        s({ action: 'click', locator: { by: 'role', value: 'link', name: 'Second page' } }),
        s({ action: 'assert', kind: 'title', expected: 'Second' }),
        s({ action: 'navigate', url: url('/'), waitUntil: 'commit' }),
        s({ action: 'navigate', url: url('/second'), waitUntil: 'networkidle' }),
        s({ action: 'navigate', url: url('/'), waitUntil: 'load' }),
      ],
    },
    {
      name: 'failures: asserts, missing elements, candidates, time-outs, impossible actions',
      steps: [
        s({ action: 'navigate', url: url('/') }),
        s(text({ by: 'testid', value: 'heading' }, 'Something else'), 'E_ASSERT_FAILED', quick),
        s(
          {
            action: 'click',
            locator: { candidates: [{ by: 'testid', value: 'missing' }, css('li.item', { nth: 5 })] },
          },
          'E_LOCATOR_NOT_FOUND',
          quick,
        ),
        s({ action: 'click', locator: { by: 'role', value: 'button', name: 'Nowhere' } }, 'E_LOCATOR_NOT_FOUND', quick),
        s(
          { action: 'assert', kind: 'value', locator: { by: 'role', value: 'button', name: 'Nowhere' }, expected: 'x' },
          'E_LOCATOR_NOT_FOUND',
          quick,
        ),
        s(
          { action: 'assert', kind: 'text', locator: { candidates: [css('#nope'), css('#nada')] }, expected: 'x' },
          'E_LOCATOR_NOT_FOUND',
          quick,
        ),
        s({ action: 'click', locator: css('#off') }, 'E_TIMEOUT', quick),
        s({ action: 'assert', kind: 'visible', locator: css('#missing') }, 'E_ASSERT_FAILED', quick),
        s({ action: 'assert', kind: 'hidden', locator: css('#save') }, 'E_ASSERT_FAILED', quick),
        s({ action: 'assert', kind: 'count', locator: css('#missing'), expected: '0' }),
        s({ action: 'assert', kind: 'checked', locator: css('#save') }, 'E_INTERNAL', quick),
        s({ action: 'assert', kind: 'value', locator: css('#status'), expected: 'x' }, 'E_INTERNAL', quick),
        s(
          { action: 'assert', kind: 'text', locator: css('#status'), op: 'matches', expected: '(' },
          'E_ASSERT_FAILED',
          quick,
        ),
        s(
          { action: 'assert', kind: 'count', locator: css('li.item'), op: 'gt', expected: 'many' },
          'E_ASSERT_FAILED',
          quick,
        ),
        s({ action: 'assert', kind: 'enabled', locator: css('#off') }, 'E_ASSERT_FAILED', quick),
        s({ action: 'assert', kind: 'checked', locator: css('#agree') }, 'E_ASSERT_FAILED', quick),
        s({ action: 'select', locator: css('#save'), by: 'value', value: 'x' }, 'E_INTERNAL', quick),
        s({ action: 'wait', locator: css('#never'), state: 'visible' }, 'E_TIMEOUT', quick),
        s({ action: 'wait', locator: css('#save'), state: 'hidden' }, 'E_TIMEOUT', quick),
        s({ action: 'wait', ms: 5000 }, 'E_TIMEOUT', quick),
        s({ action: 'eval', script: 'throw new Error("nope")' }, 'E_ASSERT_FAILED', quick),
        // candidates whose later one matches once: it is reported with count, visible and enabled
        s({ action: 'click', locator: { candidates: [css('#absent'), css('#save-all'), css('#save')] } }),
        s({
          action: 'assert',
          kind: 'text',
          locator: { candidates: [css('#absent'), css('li.item')] },
          expected: 'one',
        }),
        s({ action: 'assert', kind: 'count', locator: { candidates: [css('#absent'), css('#off')] }, expected: '1' }),
        s({ action: 'navigate', url: 'http://127.0.0.1:9/elsewhere' }, 'E_NAVIGATION_BLOCKED'),
        s({ action: 'click', locator: css('#same') }),
        s({ action: 'assert', kind: 'text', locator: css('#where'), expected: 'second page' }),
      ],
      body: (site) => ({ allowedOrigins: [site.origin] }),
    },
    {
      name: 'open shadow roots, nested; a closed one stays out of reach',
      steps: [
        s({ action: 'navigate', url: url('/shadow') }),
        s({ action: 'click', locator: { by: 'testid', value: 'inner-save' } }),
        s(text(css('#shadow-log'), 'inner')),
        s({ action: 'click', locator: { by: 'role', value: 'button', name: 'Shadow save' } }),
        s({ action: 'type', locator: { by: 'label', value: 'Shadow name' }, text: 'deep' }),
        s({ action: 'assert', kind: 'value', locator: { by: 'placeholder', value: 'inside the' }, expected: 'deep' }),
        s({ action: 'assert', kind: 'count', locator: css('.tag'), expected: '2' }),
        s(text(css('.tag', { nth: 1 }), 'two')),
        s({ action: 'assert', kind: 'visible', locator: { by: 'title', value: 'Deep link' } }),
        s({ action: 'assert', kind: 'count', locator: { by: 'text', value: 'deeper' }, expected: '1' }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Closed away' },
          expected: '0',
        }),
        s({ action: 'assert', kind: 'text', locator: css('#host'), expected: 'x' }, 'E_ASSERT_FAILED', quick),
      ],
    },
    {
      name: 'accessible names, roles and text matching',
      steps: [
        s({ action: 'navigate', url: url('/roles') }),
        s({ action: 'assert', kind: 'count', locator: { by: 'role', value: 'link' }, expected: '2' }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'navigation', name: 'main menu' },
          expected: '1',
        }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Close dialog', exact: true },
          expected: '1',
        }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'close', exact: true },
          expected: '0',
        }),
        s({ action: 'assert', kind: 'count', locator: { by: 'role', value: 'button', name: 'hidden' }, expected: '0' }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'heading', name: 'Shipping address' },
          expected: '1',
        }),
        s({ action: 'assert', kind: 'disabled', locator: { by: 'role', value: 'button', name: 'Fake disabled' } }),
        s({ action: 'assert', kind: 'enabled', locator: css('#in-legend') }),
        s({ action: 'assert', kind: 'disabled', locator: css('#in-set') }),
        s({ action: 'assert', kind: 'checked', locator: { by: 'role', value: 'checkbox', name: 'Fancy' } }),
        s({ action: 'assert', kind: 'value', locator: { by: 'label', value: 'Email address' }, expected: 'a@b.c' }),
        s({ action: 'assert', kind: 'count', locator: { by: 'label', value: 'search the' }, expected: '1' }),
        s({ action: 'assert', kind: 'count', locator: { by: 'text', value: 'apple' }, expected: '3' }),
        s({ action: 'assert', kind: 'count', locator: { by: 'text', value: 'Apple', exact: true }, expected: '1' }),
        s({ action: 'assert', kind: 'count', locator: { by: 'text', value: 'bold words' }, expected: '1' }),
        s(text({ by: 'text', value: 'some bold' }, 'Some bold words and more words')),
        s({ action: 'assert', kind: 'count', locator: { by: 'text', value: 'Send it' }, expected: '1' }),
        s({ action: 'assert', kind: 'hidden', locator: css('#invisible') }),
        s({
          action: 'assert',
          kind: 'count',
          locator: { by: 'role', value: 'button', name: 'Send it' },
          expected: '1',
        }),
      ],
    },
    {
      name: 'variables and secrets, evidence and console errors',
      steps: [
        s({ action: 'navigate', url: '{{base}}/' }, 'pass', { evidence: 'always' }),
        s({ action: 'type', locator: css('#name'), text: '{{user}}:{{secret_1}}', clear: true }),
        s({ action: 'assert', kind: 'value', locator: css('#name'), expected: 'ada:s3cr3t' }),
        s({ action: 'navigate', url: '{{base}}/noisy' }),
        s({ action: 'click', locator: css('#noisy') }),
        s({ action: 'assert', kind: 'title', expected: 'Noisy' }),
        s({ action: 'screenshot' }),
      ],
      body: (site) => ({ vars: { base: site.origin, user: 'ada', secret_1: 's3cr3t' } }),
    },
  ];
}
