// The in-page half of every recorder (docs/recording.md): turns each trusted user action into one
// test case step ({ otp }) with ranked locator candidates (locators.ts) and hands it to `send`, which
// the runner's script and the extension's content script each supply. Only trusted events count, so
// a page's own forged events record nothing. Typed text in a sensitive field never leaves the page:
// the message carries where it was typed (`secret`) and the recorder puts {{secret_N}} in its place.
import type { PageMessage, RecordedStep } from '../steps.js';
import { cssPath, isSensitive, isTextField, locatorOf, norm } from './locators.js';

export type Send = (message: PageMessage) => void;

/** The mark of the last message a document sent: a recorder waits until it has seen it (settle). */
export interface FlushMark {
  doc: string;
  seq: number;
}

type TextField = HTMLInputElement | HTMLTextAreaElement | HTMLElement;

const CLICKABLE =
  'button, a[href], input, select, textarea, label, summary, option, [role], [data-testid], [onclick], [contenteditable=""], [contenteditable="true"]';
const ALWAYS_KEYS = new Set(['Enter', 'Tab', 'Escape']);
const NAV_KEYS = new Set([
  'ArrowUp',
  'ArrowDown',
  'ArrowLeft',
  'ArrowRight',
  'PageUp',
  'PageDown',
  'Home',
  'End',
  'Backspace',
  'Delete',
]);
const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock']);

function targetOf(event: Event): Element | null {
  const raw = (event.composedPath ? event.composedPath()[0] : event.target) as Node | null;
  const el = raw && raw.nodeType === 1 ? (raw as Element) : (raw?.parentElement ?? null);
  return el ? el.closest(CLICKABLE) || el : null;
}

const modifiersOf = (e: MouseEvent | KeyboardEvent) =>
  (['Alt', 'Control', 'Meta', 'Shift'] as const).filter((m) => e[`${m.toLowerCase() as 'alt'}Key`]);

/** The key a keydown records, or null when typing covers it (letters in a field, modifiers alone). */
function recordedKey(e: KeyboardEvent, el: Element | null): string | null {
  const inField = el && (isTextField(el) || el.localName === 'select');
  const combo = e.ctrlKey || e.metaKey || e.altKey;
  if (ALWAYS_KEYS.has(e.key)) return e.key;
  if (!inField && (NAV_KEYS.has(e.key) || /^F\d{1,2}$/.test(e.key))) return e.key;
  if (!inField && combo && e.key.length === 1) return e.key;
  return null;
}

/** The select step of a select's current option: by its label when that label is unique, else by value. */
function selectStep(el: HTMLSelectElement): RecordedStep {
  const option = el.options[el.selectedIndex]!;
  const label = norm(option.label || option.textContent);
  const byLabel = label && [...el.options].filter((o) => norm(o.label || o.textContent) === label).length === 1;
  return {
    otp: {
      action: 'select',
      locator: locatorOf(el),
      by: byLabel ? 'label' : 'value',
      value: byLabel ? label : option.value,
    },
  };
}

/** The recorder of one document. Steps are numbered per document, so a recorder can tell when it has seen all of them. */
class PageCapture {
  private readonly doc = Math.random().toString(36).slice(2);
  private seq = 0;
  /** The text field being typed into. */
  private pendingText: TextField | null = null;
  /** The last change of a select, sent once the user moves on (keyboard selection fires one per arrow key). */
  private pendingSelect: { el: Element; step: RecordedStep } | null = null;
  /** Field -> value last sent, so a change after Enter adds nothing. */
  private readonly lastSent = new WeakMap<Element, string>();
  /** A label click is followed by a click on its control: that one is recorded. */
  private forwardedFromLabel: Element | null = null;

  constructor(private readonly sendMessage: Send) {}

  send(step: RecordedStep, extra: { secret?: string } = {}): void {
    this.seq += 1;
    this.sendMessage({ doc: this.doc, seq: this.seq, step, at: new Date().toISOString(), ...extra });
  }

  flushText(): void {
    const el = this.pendingText;
    this.pendingText = null;
    if (!el?.isConnected) return;
    const value = el.isContentEditable ? el.innerText : (el as HTMLInputElement).value;
    if (this.lastSent.get(el) === value) return;
    this.lastSent.set(el, value);
    const locator = locatorOf(el);
    // A sensitive value stays here: the recorder puts {{secret_N}} in its place, one N per field.
    if (isSensitive(el))
      this.send({ otp: { action: 'type', locator, text: '', clear: true } }, { secret: cssPath(el) });
    else this.send({ otp: { action: 'type', locator, text: value, clear: true } });
  }

  flushSelect(): void {
    const pending = this.pendingSelect;
    this.pendingSelect = null;
    if (pending) this.send(pending.step);
  }

  flush(): FlushMark {
    this.flushText();
    this.flushSelect();
    return { doc: this.doc, seq: this.seq };
  }

  click(e: MouseEvent): void {
    const el = targetOf(e);
    if (!el) return;
    const forwarded = el === this.forwardedFromLabel;
    this.forwardedFromLabel = null;
    if (!e.isTrusted && !forwarded) return;
    if (el !== this.pendingText) this.flushText();
    this.flushSelect();
    if (e.detail === 2) return; // the second click of a double click: the dblclick step stands for it
    const control = el.localName === 'label' ? (el as HTMLLabelElement).control : null;
    if (control) {
      // The browser clicks the control next: that click is the step.
      this.forwardedFromLabel = control;
      return;
    }
    if (el.localName === 'select' || el.localName === 'option') return; // the change says what was picked
    const input = el as HTMLInputElement;
    if (el.localName === 'input' && (input.type === 'checkbox' || input.type === 'radio')) {
      // The control has already changed state when its click is dispatched.
      this.send({ otp: { action: input.checked ? 'check' : 'uncheck', locator: locatorOf(el) } });
      return;
    }
    const modifiers = modifiersOf(e);
    this.send({ otp: { action: 'click', locator: locatorOf(el), ...(modifiers.length ? { modifiers } : {}) } });
  }

  dblclick(e: MouseEvent): void {
    const el = targetOf(e);
    if (el && e.isTrusted) this.send({ otp: { action: 'dblclick', locator: locatorOf(el) } });
  }

  contextmenu(e: MouseEvent): void {
    const el = targetOf(e);
    if (!el || !e.isTrusted) return;
    this.flush();
    this.send({ otp: { action: 'rightClick', locator: locatorOf(el) } });
  }

  input(e: Event): void {
    const el = (e.composedPath ? e.composedPath()[0] : e.target) as Element | null;
    if (!e.isTrusted || !el || el.nodeType !== 1 || !isTextField(el)) return;
    if (this.pendingText && this.pendingText !== el) this.flushText();
    this.pendingText = el;
  }

  change(e: Event): void {
    const el = e.target as Element | null;
    if (!e.isTrusted || !el) return;
    if (el === this.pendingText) return this.flushText();
    const select = el as HTMLSelectElement;
    if (el.localName === 'select' && !select.multiple && select.selectedIndex >= 0)
      this.pendingSelect = { el, step: selectStep(select) };
  }

  focusout(e: FocusEvent): void {
    if (e.target === this.pendingText) this.flushText();
    if (this.pendingSelect && e.target === this.pendingSelect.el) this.flushSelect();
  }

  keydown(e: KeyboardEvent): void {
    if (!e.isTrusted || e.repeat || MODIFIER_KEYS.has(e.key)) return;
    const el = targetOf(e);
    const key = recordedKey(e, el);
    if (!key) return;
    // The text typed so far goes first: change fires only after this keydown.
    this.flush();
    const keys = [...modifiersOf(e).filter((m) => m !== 'Shift' || key.length > 1), key];
    const onElement = el && el !== document.body && el !== document.documentElement;
    this.send({ otp: { action: 'press', key: keys.join('+'), ...(onElement ? { locator: locatorOf(el) } : {}) } });
  }
}

/**
 * Starts recording this document: listeners in the capture phase (before the page's own handlers can
 * stop them). Answers flush(), which sends what is pending (text being typed, a select just changed)
 * and the mark of the last message sent.
 */
export function installRecorder(send: Send): { flush: () => FlushMark } {
  const capture = new PageCapture(send);
  const on = <K extends keyof WindowEventMap>(type: K, listener: (e: WindowEventMap[K]) => void) =>
    addEventListener(type, listener, true);
  on('click', (e) => capture.click(e));
  on('dblclick', (e) => capture.dblclick(e));
  on('contextmenu', (e) => capture.contextmenu(e));
  on('input', (e) => capture.input(e));
  on('change', (e) => capture.change(e));
  on('focusout', (e) => capture.focusout(e));
  on('keydown', (e) => capture.keydown(e));
  on('pagehide', () => capture.flush());
  on('beforeunload', () => capture.flush());
  return { flush: () => capture.flush() };
}
