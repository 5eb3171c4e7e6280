// One OTP step as an English sentence: "click the button named Save", "type {{user}} into the field
// labelled Email". Every action, locator strategy and assert kind of the protocol has its wording here
// (the unit test walks ACTION_NAMES, LOCATOR_STRATEGIES and ASSERT_KINDS). Plain text: callers escape.
// In the protocol room because the console and the ai room's bug drafts both word steps with it.
import type { ProtocolStepAction } from './schemas/actions.js';
import type { Locator, LocatorOrCandidates } from './schemas/locator.js';

type Step = ProtocolStepAction | { action: string; [key: string]: unknown };

const q = (text: unknown) => `“${String(text)}”`;

/** A locator as a noun phrase: "the button named Save", "the element with test id login". */
export function locatorPhrase(locator: LocatorOrCandidates | Locator | undefined | null): string {
  if (!locator) return 'the page';
  if ('candidates' in locator) {
    const [first, ...rest] = locator.candidates;
    const alt = rest.length ? ` (or ${rest.map((c) => locatorPhrase(c)).join(', or ')})` : '';
    return `${locatorPhrase(first!)}${alt}`;
  }
  const exact = locator.exact ? 'exactly ' : '';
  let phrase: string;
  switch (locator.by) {
    case 'testid':
      phrase = `the element with test id ${q(locator.value)}`;
      break;
    case 'role':
      phrase = `the ${locator.value}${locator.name !== undefined ? ` named ${exact}${q(locator.name)}` : ''}`;
      break;
    case 'label':
      phrase = `the field labelled ${exact}${q(locator.value)}`;
      break;
    case 'placeholder':
      phrase = `the field with placeholder ${exact}${q(locator.value)}`;
      break;
    case 'text':
      phrase = `the element with text ${exact}${q(locator.value)}`;
      break;
    case 'alt':
      phrase = `the image with alt text ${exact}${q(locator.value)}`;
      break;
    case 'title':
      phrase = `the element titled ${exact}${q(locator.value)}`;
      break;
    case 'css':
      phrase = `the element matching CSS ${q(locator.value)}`;
      break;
    case 'xpath':
      phrase = `the element at XPath ${q(locator.value)}`;
      break;
    default:
      phrase = `the element found by ${String((locator as { by: unknown }).by)} ${q((locator as { value: unknown }).value)}`;
  }
  if (locator.nth !== undefined) phrase = `match number ${locator.nth + 1} of ${phrase}`;
  if (locator.within) phrase += ` inside ${locatorPhrase(locator.within)}`;
  if (locator.frame) phrase += ` in the frame ${q(locator.frame)}`;
  return phrase;
}

const OPS: Record<string, string> = {
  equals: 'is',
  contains: 'contains',
  matches: 'matches the pattern',
  gt: 'is more than',
  lt: 'is less than',
};

function assertSentence(s: Record<string, unknown>): string {
  const target = locatorPhrase(s.locator as Locator | undefined);
  const op = OPS[String(s.op ?? 'equals')] ?? String(s.op);
  const expected = q(s.expected ?? '');
  switch (s.kind) {
    case 'visible':
      return `check that ${target} is visible`;
    case 'hidden':
      return `check that ${target} is hidden`;
    case 'enabled':
      return `check that ${target} is enabled`;
    case 'disabled':
      return `check that ${target} is disabled`;
    case 'checked':
      return `check that ${target} is checked`;
    case 'text':
      return `check that the text of ${target} ${op} ${expected}`;
    case 'value':
      return `check that the value of ${target} ${op} ${expected}`;
    case 'count':
      return `check that the count of ${target} ${op} ${String(s.expected ?? '')}`;
    case 'url':
      return `check that the page address ${op} ${expected}`;
    case 'title':
      return `check that the page title ${op} ${expected}`;
    case 'attribute':
      return `check that the ${q(s.attribute)} attribute of ${target} ${op} ${expected}`;
    default:
      return `check ${String(s.kind)} of ${target}`;
  }
}

/** The step as a sentence starting with a lower-case verb. */
export function stepSentence(step: Step): string {
  const s = step as Record<string, unknown>;
  const target = () => locatorPhrase(s.locator as LocatorOrCandidates | undefined);
  switch (s.action) {
    case 'navigate':
      return `go to ${q(s.url)}${s.waitUntil ? ` and wait for ${s.waitUntil}` : ''}`;
    case 'click': {
      const mods = Array.isArray(s.modifiers) && s.modifiers.length ? ` holding ${s.modifiers.join('+')}` : '';
      return `click ${target()}${mods}`;
    }
    case 'dblclick':
      return `double-click ${target()}`;
    case 'rightClick':
      return `right-click ${target()}`;
    case 'type':
      return `${s.clear ? 'clear and ' : ''}type ${q(s.text)} into ${target()}${s.delayMs ? ` (${s.delayMs} ms between keys)` : ''}`;
    case 'press':
      return `press ${String(s.key)}${s.locator ? ` on ${target()}` : ''}`;
    case 'select': {
      const how =
        s.by === 'index'
          ? `option number ${Number(s.value) + 1}`
          : s.by === 'label'
            ? `the option labelled ${q(s.value)}`
            : `the option with value ${q(s.value)}`;
      return `choose ${how} in ${target()}`;
    }
    case 'check':
      return `check ${target()}`;
    case 'uncheck':
      return `uncheck ${target()}`;
    case 'hover':
      return `hover over ${target()}`;
    case 'scroll': {
      if (s.into) return `scroll ${target()} into view`;
      const by =
        [s.dx ? `${s.dx} px across` : '', s.dy ? `${s.dy} px down` : ''].filter(Boolean).join(' and ') || 'a little';
      return `scroll ${s.locator ? target() : 'the page'} by ${by}`;
    }
    case 'upload':
      return `upload the asset ${String(s.assetId)} into ${target()}`;
    case 'wait': {
      if (s.ms !== undefined) return `wait ${s.ms} ms`;
      if (s.networkidle) return 'wait until the network is idle';
      return `wait until ${target()} is ${String(s.state ?? 'visible')}`;
    }
    case 'screenshot':
      return `take a screenshot of the ${s.fullPage ? 'whole page' : 'visible page'}`;
    case 'assert':
      return assertSentence(s);
    case 'eval':
      return `run a script (${String(s.script ?? '').length} characters)`;
    default:
      return `${String(s.action)} (an action this console does not know)`;
  }
}
