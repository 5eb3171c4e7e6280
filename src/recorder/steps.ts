// What every recorder does with the steps its page script sends (the runner's `otp-runner record`
// and the extension's side panel): {{secret_N}} in place of sensitive text (one N per field), the
// frame of a step recorded in an iframe, and the step said in words for people. No DOM, no Node.
import type { Candidate, RecordedLocator } from './page/locators.js';

/** A recorded step as sent: a test case step. */
export type RecordedStep = { otp: Record<string, unknown> & { action: string }; label?: string };

/** What a page script sends for each step. */
export interface PageMessage {
  /** The document that recorded it, and its number there (a recorder waits until it has seen a document's last). */
  doc: string;
  seq: number;
  step: RecordedStep;
  at: string;
  /** Set for typed text in a sensitive field: where it was typed (the text itself stays in the page). */
  secret?: string;
}

/** Numbers sensitive fields: the same field (page address without query, and CSS path) keeps its N. */
export class SecretNumbers {
  private readonly numbers: Map<string, number>;

  /** `known`: the numbers given so far (a recorder that was stopped and goes on keeps them). */
  constructor(known: Iterable<[string, number]> = []) {
    this.numbers = new Map(known);
  }

  /** The numbers given so far, to be kept. */
  toJSON(): Array<[string, number]> {
    return [...this.numbers];
  }

  /** Puts {{secret_N}} as the step's text; `pageUrl` is the address of the frame that typed it. */
  mask(step: RecordedStep, pageUrl: string, where: string): void {
    const field = `${pageUrl.split(/[?#]/)[0]} ${where}`;
    if (!this.numbers.has(field)) this.numbers.set(field, this.numbers.size + 1);
    step.otp.text = `{{secret_${this.numbers.get(field)}}}`;
  }
}

/** Scopes a step's locator (each candidate) to the iframe `frame` (a CSS selector) it was recorded in. */
export function inFrame(step: RecordedStep, frame: string): void {
  const locator = step.otp.locator as { candidates?: object[] } | undefined;
  if (!locator) return;
  if (locator.candidates) locator.candidates = locator.candidates.map((c) => ({ ...c, frame }));
  else step.otp.locator = { ...locator, frame };
}

/** The locator's candidates, best first (one when the locator is a single strategy). */
export function candidatesOfStep(step: RecordedStep): Candidate[] {
  const locator = step.otp.locator as RecordedLocator | undefined;
  if (!locator) return [];
  return 'candidates' in locator ? locator.candidates : [locator];
}

/** A short line for logs: `click role="button" "Sign in"`. */
export function stepSummary(step: RecordedStep): string {
  const { action, ...rest } = step.otp;
  const first = candidatesOfStep(step)[0];
  const target = first ? ` ${first.by}=${JSON.stringify(first.value)}` : '';
  const text = rest.text ?? rest.url ?? rest.key ?? rest.value;
  return `${action}${target}${text !== undefined ? ` ${JSON.stringify(text)}` : ''}`;
}

/** How a candidate is said: `the button “Sign in”`, `the field labelled “Email”`, `#save`. */
export function candidateWords(c: Candidate): string {
  switch (c.by) {
    case 'role':
      return `the ${c.value} “${c.name ?? ''}”`;
    case 'label':
      return `the field labelled “${c.value}”`;
    case 'placeholder':
      return `the field with placeholder “${c.value}”`;
    case 'text':
      return `the text “${c.value}”`;
    case 'testid':
      return `the test id “${c.value}”`;
    case 'alt':
      return `the image “${c.value}”`;
    case 'title':
      return `the element titled “${c.value}”`;
    default:
      return `\`${c.value}\``;
  }
}

const VERBS: Record<string, string> = {
  click: 'Click',
  dblclick: 'Double-click',
  rightClick: 'Right-click',
  check: 'Check',
  uncheck: 'Uncheck',
  press: 'Press',
};

/** The step in words for people (the side panel): `Type “ada” into the field labelled “Name”`. */
export function stepSentence(step: RecordedStep): string {
  const o = step.otp;
  const first = candidatesOfStep(step)[0];
  const target = first ? candidateWords(first) : 'the page';
  switch (o.action) {
    case 'navigate':
      return `Open ${String(o.url)}`;
    case 'type':
      return `Type “${String(o.text)}” into ${target}`;
    case 'select':
      return `Select “${String(o.value)}” in ${target}`;
    case 'press':
      return `Press ${String(o.key)}${first ? ` on ${target}` : ''}`;
    default:
      return `${VERBS[o.action] ?? o.action} ${target}`;
  }
}
