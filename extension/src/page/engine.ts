// The extension's page engine: injected by the worker into an isolated world of the run's page (the
// page's own scripts cannot see or reach it), it resolves locators (frames of the same origin, open
// shadow roots, within, nth) and reads and waits for element states, answering plain data. The worker
// calls it through CDP Runtime.evaluate (../worker/page.ts); trusted input is sent by the worker.
import type { Locator } from '../../../src/otp/protocol/schemas/locator.js';
import { isElement, matchStrategy, pierce, type Root } from './match.js';
import { checkedState, hiddenForAria, isDisabled, isVisible, retarget } from './state.js';

interface Found {
  elements: Element[];
  /** The iframes entered, outermost first (to turn a point in the element's frame into the page's). */
  frames: HTMLIFrameElement[];
  /** The frame selector whose document is another origin's (not reachable from here). */
  crossOrigin?: string;
}

function matchIn(root: Root, loc: Locator): Element[] {
  let scope: Root = root;
  if (loc.within) {
    const within = matchIn(root, loc.within)[loc.within.nth ?? 0];
    if (!within) return [];
    scope = within;
  }
  return matchStrategy(scope, loc);
}

function find(loc: Locator): Found {
  let doc: Document = document;
  const frames: HTMLIFrameElement[] = [];
  if (loc.frame) {
    const iframe = pierce(doc, loc.frame).find((el) => el.nodeName === 'IFRAME' || el.nodeName === 'FRAME');
    if (!iframe) return { elements: [], frames };
    const inner = (iframe as HTMLIFrameElement).contentDocument;
    if (!inner) return { elements: [], frames, crossOrigin: loc.frame };
    doc = inner;
    frames.push(iframe as HTMLIFrameElement);
  }
  return { elements: matchIn(doc, loc), frames };
}

function found(loc: Locator): Found {
  const result = find(loc);
  if (result.crossOrigin)
    throw new Error(
      `E_FRAME_UNREACHABLE: the frame ${result.crossOrigin} holds a page of another origin, which the extension cannot reach`,
    );
  return result;
}

/** A candidate as step results report it: its match count and, for one match, its visible and enabled. */
export interface Probe {
  count: number;
  visible?: boolean;
  enabled?: boolean;
}

function probe(loc: Locator, full: boolean): Probe {
  const { elements } = found(loc);
  if (!full || elements.length !== 1) return { count: elements.length };
  const el = elements[0]!;
  return { count: 1, visible: isVisible(el), enabled: !isDisabled(retarget(el, true)) };
}

/** Resolves after the next frame is drawn, or 50 ms in a page that draws none (a background tab). */
function nextFrame(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 50);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const POLL_MS = [0, 20, 50, 100, 100, 500];

/** Calls check until it answers something, or until timeoutMs: then answers undefined. */
async function poll<T>(timeoutMs: number, check: () => T | undefined): Promise<T | undefined> {
  const until = performance.now() + timeoutMs;
  for (let i = 0; ; i++) {
    const answer = check();
    if (answer !== undefined) return answer;
    const pause = POLL_MS[Math.min(i, POLL_MS.length - 1)]!;
    if (performance.now() + pause >= until) return undefined;
    if (pause === 0) await nextFrame();
    else await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** One pass over candidates: each with its count, until one matches beyond its nth. */
function firstMatch(candidates: Locator[]): { index: number; tried: Probe[] } {
  const tried: Probe[] = [];
  for (const [i, loc] of candidates.entries()) {
    const p = probe(loc, i > 0);
    tried.push(p);
    if (p.count > (loc.nth ?? 0)) return { index: i, tried };
  }
  return { index: -1, tried };
}

function targetOf(loc: Locator): { el?: Element; frames: HTMLIFrameElement[]; count: number } {
  const { elements, frames } = found(loc);
  return { el: elements[loc.nth ?? 0], frames, count: elements.length };
}

/** A point of the element in the page's viewport: its box's centre, through the iframes it is in. */
function pagePoint(el: Element, frames: HTMLIFrameElement[]): { x: number; y: number } {
  const rect = el.getBoundingClientRect();
  let x = rect.left + rect.width / 2;
  let y = rect.top + rect.height / 2;
  for (const frame of [...frames].reverse()) {
    const box = frame.getBoundingClientRect();
    const style = frame.ownerDocument.defaultView!.getComputedStyle(frame);
    x += box.left + frame.clientLeft + Number.parseFloat(style.paddingLeft);
    y += box.top + frame.clientTop + Number.parseFloat(style.paddingTop);
  }
  return { x, y };
}

/** Whether a pointer at the element's centre reaches it (and not an element laid over it). */
function receivesPointer(el: Element): boolean {
  const rect = el.getBoundingClientRect();
  const x = rect.left + rect.width / 2;
  const y = rect.top + rect.height / 2;
  let hit: Element | null = el.ownerDocument.elementFromPoint(x, y);
  while (hit?.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  for (let at: Node | null = hit; at; at = at.parentNode ?? (at as ShadowRoot).host ?? null) if (at === el) return true;
  return false;
}

function sameRect(a: DOMRect, b: DOMRect): boolean {
  return a.top === b.top && a.left === b.left && a.width === b.width && a.height === b.height;
}

export interface ActionPoint {
  ok: boolean;
  x?: number;
  y?: number;
  count: number;
  /** Why it is not ready yet (not attached, not visible, disabled, moving, covered). */
  waiting?: string;
}

/**
 * Waits (at most timeoutMs) until the element can take pointer input as Playwright's actions require:
 * attached, visible, stable over two frames, enabled (when asked), not covered; scrolled into view.
 */
async function actionPoint(loc: Locator, needs: { enabled: boolean; pointer: boolean }, timeoutMs: number) {
  let last: DOMRect | undefined;
  let waiting = 'attached';
  let count = 0;
  /** What the element still lacks, or undefined when it is ready (checked in Playwright's order). */
  const lacks = (el: Element | undefined): string | undefined => {
    if (!el?.isConnected) return 'attached';
    if (!isVisible(el)) return 'visible';
    if (needs.enabled && isDisabled(retarget(el, false))) return 'enabled';
    (el as HTMLElement & { scrollIntoViewIfNeeded?(center: boolean): void }).scrollIntoViewIfNeeded?.(true);
    const rect = el.getBoundingClientRect();
    const stable = last !== undefined && sameRect(last, rect);
    last = rect;
    if (!stable) return 'stable';
    if (needs.pointer && !receivesPointer(el)) return 'not covered';
    return undefined;
  };
  const ready = await poll<ActionPoint>(timeoutMs, () => {
    const t = targetOf(loc);
    count = t.count;
    const missing = lacks(t.el);
    if (missing === 'attached' || missing === 'visible') last = undefined;
    waiting = missing ?? waiting;
    return missing ? undefined : { ok: true, count, ...pagePoint(t.el!, t.frames) };
  });
  return ready ?? { ok: false, count, waiting };
}

type StateKind = 'visible' | 'hidden' | 'enabled' | 'disabled' | 'checked';

/** The word an assert's actual holds for a state, or an error for a state the element cannot have. */
function stateWord(el: Element | undefined, kind: StateKind): string {
  if (kind === 'visible' || kind === 'hidden') return el && isVisible(el) ? 'visible' : 'hidden';
  if (!el) throw new Error('element is not attached');
  const control = retarget(el, true);
  if (kind === 'enabled' || kind === 'disabled') return isDisabled(control) ? 'disabled' : 'enabled';
  const checked = checkedState(control);
  if (checked === 'error') throw new Error('Not a checkbox or radio button');
  return checked ? 'checked' : 'unchecked';
}

function innerText(el: Element): string {
  // biome-ignore lint/performance/useDomNodeTextContent: a text assert reads what a user sees (innerText), as otp-runner does
  return 'innerText' in el ? (el as HTMLElement).innerText : (el.textContent ?? '');
}

/** An element's value for a `value` assert: of an input, textarea or select (a label's control). */
function inputValue(el: Element): string {
  const control = retarget(el, true);
  if (!['INPUT', 'TEXTAREA', 'SELECT'].includes(control.nodeName))
    throw new Error('Node is not an <input>, <textarea> or <select> element');
  return (control as HTMLInputElement).value;
}

/** Reads what an assert observes of the element; waits (at most timeoutMs) for it to be attached. */
async function read(loc: Locator, kind: string, attribute: string | undefined, timeoutMs: number) {
  const el = await poll(timeoutMs, () => targetOf(loc).el);
  if (!el) return { found: false, count: targetOf(loc).count };
  switch (kind) {
    case 'text':
      return { found: true, actual: innerText(el) };
    case 'value':
      return { found: true, actual: inputValue(el) };
    case 'attribute':
      return { found: true, actual: el.getAttribute(attribute ?? '') ?? '' };
    default:
      return { found: true, actual: stateWord(el, kind as StateKind) };
  }
}

function requireTarget(loc: Locator): Element {
  const el = targetOf(loc).el;
  if (!el) throw new Error('element is not attached');
  return el;
}

/** Focuses a field for typing: emptied and selected (clear), or with the caret after its content. */
function focusForTyping(loc: Locator, clear: boolean): void {
  const el = requireTarget(loc) as HTMLInputElement;
  el.focus();
  const field = ['INPUT', 'TEXTAREA'].includes(el.nodeName);
  try {
    if (field && clear) el.select();
    else if (field) el.setSelectionRange(el.value.length, el.value.length);
  } catch {
    // input types without a selection (number, email): the browser keeps its own caret
  }
  if (clear && !field && el.isContentEditable) {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    el.ownerDocument.getSelection()?.removeAllRanges();
    el.ownerDocument.getSelection()?.addRange(range);
  }
}

function selectOption(loc: Locator, by: string, value: string | number): void {
  const select = retarget(requireTarget(loc), true) as HTMLSelectElement;
  if (select.nodeName !== 'SELECT') throw new Error('Element is not a <select> element');
  const options = [...select.options];
  const option =
    by === 'index'
      ? options[Number(value)]
      : options.find((o) => (by === 'label' ? o.label === String(value) : o.value === String(value)));
  if (!option) throw new Error(`no option with ${by} "${value}"`);
  for (const o of options) o.selected = o === option;
  select.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  select.dispatchEvent(new Event('change', { bubbles: true }));
}

/** Sets a file input to one file made from the asset's bytes (a DataTransfer: no file path needed). */
function setFile(loc: Locator, file: { name: string; type: string; base64: string }): void {
  const input = retarget(requireTarget(loc), true) as HTMLInputElement;
  if (input.nodeName !== 'INPUT' || input.type !== 'file')
    throw new Error('Node is not an HTMLInputElement of type file');
  const bytes = Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], file.name, { type: file.type }));
  input.files = transfer.files;
  input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

function scrollElement(loc: Locator, dx: number, dy: number): void {
  requireTarget(loc).scrollBy({ left: dx, top: dy, behavior: 'instant' });
}

/** Whether no candidate has an element in that state any more (wait hidden / detached). */
async function waitGone(candidates: Locator[], state: 'hidden' | 'detached', timeoutMs: number): Promise<boolean> {
  const gone = () =>
    candidates.every((loc) => {
      const el = targetOf(loc).el;
      return !el || (state === 'hidden' && !isVisible(el));
    }) || undefined;
  return (await poll(timeoutMs, gone)) ?? false;
}

/** Waits for any candidate to match beyond its nth; answers each candidate's probe of the last look. */
async function resolve(candidates: Locator[], timeoutMs: number) {
  let last = firstMatch(candidates);
  const hit = await poll(timeoutMs, () => {
    last = firstMatch(candidates);
    return last.index >= 0 ? last : undefined;
  });
  return hit ?? last;
}

/** Waits (at most timeoutMs) for the element to be attached, or visible too. */
async function waitState(loc: Locator, state: 'visible' | 'attached', timeoutMs: number): Promise<boolean> {
  const reached = () => {
    const el = targetOf(loc).el;
    return el && (state === 'attached' || isVisible(el)) ? true : undefined;
  };
  return (await poll(timeoutMs, reached)) ?? false;
}

const engine = {
  title: () => document.title,
  waitState,
  probe: (loc: Locator) => probe(loc, false),
  firstMatch,
  resolve,
  actionPoint,
  read,
  state: (loc: Locator, kind: StateKind) => stateWord(targetOf(loc).el, kind),
  hiddenForAria: (loc: Locator) => {
    const el = targetOf(loc).el;
    return el ? hiddenForAria(el) : true;
  },
  focusForTyping,
  selectOption,
  setFile,
  scrollElement,
  scrollPage: (dx: number, dy: number) => window.scrollBy({ left: dx, top: dy, behavior: 'instant' }),
  waitGone,
  isElement: (loc: Locator) => isElement(targetOf(loc).el),
};

export type PageEngine = typeof engine;

(globalThis as unknown as { __otpEngine: PageEngine }).__otpEngine = engine;
