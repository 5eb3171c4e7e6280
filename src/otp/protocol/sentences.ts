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

/** A step's fields, read as they come (a step of an action this code does not know is worded too). */
type Fields = Record<string, unknown>;

/** Each action's sentence, from the step's fields and the phrase of its locator. */
const SENTENCES = new Map<string, (s: Fields, target: () => string) => string>([
  ['navigate', (s) => `go to ${q(s.url)}${s.waitUntil ? ` and wait for ${s.waitUntil}` : ''}`],
  ['click', (s, target) => `click ${target()}${modifiersPhrase(s.modifiers)}`],
  ['dblclick', (_s, target) => `double-click ${target()}`],
  ['rightClick', (_s, target) => `right-click ${target()}`],
  [
    'type',
    (s, target) =>
      `${s.clear ? 'clear and ' : ''}type ${q(s.text)} into ${target()}${s.delayMs ? ` (${s.delayMs} ms between keys)` : ''}`,
  ],
  ['press', (s, target) => `press ${String(s.key)}${s.locator ? ` on ${target()}` : ''}`],
  ['select', (s, target) => `choose ${optionPhrase(s)} in ${target()}`],
  ['check', (_s, target) => `check ${target()}`],
  ['uncheck', (_s, target) => `uncheck ${target()}`],
  ['hover', (_s, target) => `hover over ${target()}`],
  ['scroll', scrollSentence],
  ['upload', (s, target) => `upload the asset ${String(s.assetId)} into ${target()}`],
  ['wait', waitSentence],
  ['screenshot', (s) => `take a screenshot of the ${s.fullPage ? 'whole page' : 'visible page'}`],
  ['assert', (s) => assertSentence(s)],
  ['eval', (s) => `run a script (${String(s.script ?? '').length} characters)`],
]);

/** The step as a sentence starting with a lower-case verb. */
export function stepSentence(step: Step): string {
  const s = step as Fields;
  const sentence = SENTENCES.get(String(s.action));
  if (!sentence) return `${String(s.action)} (an action this console does not know)`;
  return sentence(s, () => locatorPhrase(s.locator as LocatorOrCandidates | undefined));
}

function modifiersPhrase(modifiers: unknown): string {
  return Array.isArray(modifiers) && modifiers.length ? ` holding ${modifiers.join('+')}` : '';
}

function optionPhrase(s: Fields): string {
  if (s.by === 'index') return `option number ${Number(s.value) + 1}`;
  return s.by === 'label' ? `the option labelled ${q(s.value)}` : `the option with value ${q(s.value)}`;
}

function scrollSentence(s: Fields, target: () => string): string {
  if (s.into) return `scroll ${target()} into view`;
  const by =
    [s.dx ? `${s.dx} px across` : '', s.dy ? `${s.dy} px down` : ''].filter(Boolean).join(' and ') || 'a little';
  return `scroll ${s.locator ? target() : 'the page'} by ${by}`;
}

function waitSentence(s: Fields, target: () => string): string {
  if (s.ms !== undefined) return `wait ${s.ms} ms`;
  if (s.networkidle) return 'wait until the network is idle';
  return `wait until ${target()} is ${String(s.state ?? 'visible')}`;
}
