// How each OTP locator strategy matches elements, as otp-runner's Playwright matches them (its
// getByTestId, getByRole, getByLabel, getByPlaceholder, getByText, getByAltText, getByTitle, css and
// xpath): the same text normalisation, the same exact and substring rules, open shadow roots pierced
// in the same order (a root's own elements first, then each shadow root in document order). Role and
// accessible name come from dom-accessibility-api. Runs in the extension's isolated world of a page.
import { computeAccessibleName, getRole } from 'dom-accessibility-api';
import { hiddenForAria } from './state.js';

export type Root = Document | Element | ShadowRoot;

/** Node types, not instanceof: an element of a same-origin frame belongs to that frame's realm. */
export const isElement = (node: Node | null | undefined): node is Element => node?.nodeType === 1;
export const isDocument = (node: Node): node is Document => node.nodeType === 9;

/** Runs of white space as one space, trimmed; zero-width spaces and soft hyphens dropped (as Playwright). */
export function normaliseWhiteSpace(text: string): string {
  return text
    .replace(/[\u200b\u00ad]/g, '')
    .trim()
    .replace(/\s+/g, ' ');
}

/** Every element under root matching css, then those of each open shadow root below it, in order. */
export function pierce(root: Root, css: string): Element[] {
  const out: Element[] = [];
  const query = (node: Root) => {
    for (const el of node.querySelectorAll(css)) out.push(el);
    if (isElement(node) && node.shadowRoot) query(node.shadowRoot);
    for (const el of node.querySelectorAll('*')) if (el.shadowRoot) query(el.shadowRoot);
  };
  query(root);
  return out;
}

interface ElementText {
  full: string;
  normalized: string;
}

type TextCache = Map<Node, ElementText>;

function skippedForText(el: Element): boolean {
  const name = el.nodeName;
  return name === 'SCRIPT' || name === 'NOSCRIPT' || name === 'STYLE' || Boolean(el.ownerDocument.head?.contains(el));
}

/** An element's text as Playwright's text engine reads it: text nodes and children, shadow root included. */
export function elementText(cache: TextCache, node: Element | ShadowRoot): ElementText {
  const known = cache.get(node);
  if (known) return known;
  const full = isElement(node) && skippedForText(node) ? '' : fullText(cache, node);
  const value = { full, normalized: full ? normaliseWhiteSpace(full) : '' };
  cache.set(node, value);
  return value;
}

/** A button-like input's value; else its text nodes and child elements' text, its shadow root's after. */
function fullText(cache: TextCache, node: Element | ShadowRoot): string {
  if (node.nodeName === 'INPUT' && ['submit', 'button', 'reset'].includes((node as HTMLInputElement).type))
    return (node as HTMLInputElement).value;
  let full = '';
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === Node.TEXT_NODE) full += child.nodeValue ?? '';
    else if (child.nodeType === Node.ELEMENT_NODE) full += elementText(cache, child as Element).full;
  }
  if (isElement(node) && node.shadowRoot) full += elementText(cache, node.shadowRoot).full;
  return full;
}

type TextMatcher = (text: ElementText) => boolean;

/** exact: the normalised text equals; else it contains the value, case-insensitively. */
function textMatcher(value: string, exact: boolean | undefined): TextMatcher {
  const wanted = normaliseWhiteSpace(value);
  if (exact) return (t) => t.normalized === wanted;
  const lower = wanted.toLowerCase();
  return (t) => t.normalized.toLowerCase().includes(lower);
}

/** Attributes (placeholder, alt, title, data-testid): exact is equality, else a case-insensitive substring. */
function attributeMatcher(value: string, exact: boolean | undefined): (s: string) => boolean {
  if (exact) return (s) => s === value;
  const lower = value.toLowerCase();
  return (s) => s.toLowerCase().includes(lower);
}

function byAttribute(root: Root, name: string, value: string, exact: boolean | undefined): Element[] {
  const matches = attributeMatcher(value, exact);
  return pierce(root, `[${name}]`).filter((el) => matches(el.getAttribute(name) ?? ''));
}

/** getByText: elements whose own text matches and none of whose child elements' text does. */
function byText(root: Root, value: string, exact: boolean | undefined): Element[] {
  const cache: TextCache = new Map();
  const matches = textMatcher(value, exact);
  const result: Element[] = [];
  let lastMiss: Element | undefined;
  const consider = (el: Element) => {
    if (!exact && lastMiss?.contains(el)) return;
    if (skippedForText(el) || !matches(elementText(cache, el))) {
      lastMiss = el;
      return;
    }
    for (let child = el.firstElementChild; child; child = child.nextElementSibling)
      if (matches(elementText(cache, child))) return;
    if (el.shadowRoot && matches(elementText(cache, el.shadowRoot))) return;
    result.push(el);
  };
  if (isElement(root)) consider(root);
  for (const el of pierce(root, '*')) consider(el);
  return result;
}

const LABELLED = ['BUTTON', 'METER', 'OUTPUT', 'PROGRESS', 'SELECT', 'TEXTAREA'];

/** The texts that label an element: aria-labelledby's elements, else aria-label, else its <label>s. */
function labelsOf(cache: TextCache, el: Element): ElementText[] {
  const ids = el.getAttribute('aria-labelledby');
  if (ids) {
    const refs = ids
      .split(/\s+/)
      .map((id) => (el.getRootNode() as Document | ShadowRoot).getElementById?.(id))
      .filter((r): r is HTMLElement => Boolean(r));
    if (refs.length) return refs.map((r) => elementText(cache, r));
  }
  const ariaLabel = el.getAttribute('aria-label');
  if (ariaLabel?.trim()) return [{ full: ariaLabel, normalized: normaliseWhiteSpace(ariaLabel) }];
  const input = el.nodeName === 'INPUT' && (el as HTMLInputElement).type !== 'hidden';
  if (input || LABELLED.includes(el.nodeName)) {
    const labels = (el as HTMLInputElement).labels;
    if (labels) return [...labels].map((label) => elementText(cache, label));
  }
  return [];
}

function byLabel(root: Root, value: string, exact: boolean | undefined): Element[] {
  const cache: TextCache = new Map();
  const matches = textMatcher(value, exact);
  return pierce(root, '*').filter((el) => labelsOf(cache, el).some(matches));
}

function byRole(root: Root, role: string, name: string | undefined, exact: boolean | undefined): Element[] {
  const wanted = name === undefined ? undefined : normaliseWhiteSpace(name);
  return pierce(root, '*').filter((el) => {
    if (getRole(el) !== role || hiddenForAria(el)) return false;
    if (wanted === undefined) return true;
    const accessible = normaliseWhiteSpace(computeAccessibleName(el));
    return exact ? accessible === wanted : accessible.toLowerCase().includes(wanted.toLowerCase());
  });
}

function byXpath(root: Root, xpath: string): Element[] {
  const doc = isDocument(root) ? root : root.ownerDocument;
  const XPath = doc.defaultView?.XPathResult ?? XPathResult;
  const found = doc.evaluate(xpath, root, null, XPath.ORDERED_NODE_SNAPSHOT_TYPE, null);
  const out: Element[] = [];
  for (let i = 0; i < found.snapshotLength; i++) {
    const node = found.snapshotItem(i);
    if (node?.nodeType === Node.ELEMENT_NODE) out.push(node as Element);
  }
  return out;
}

export interface Strategy {
  by: string;
  value: string;
  name?: string;
  exact?: boolean;
}

/** Every element the strategy matches under root, in Playwright's order. */
export function matchStrategy(root: Root, loc: Strategy): Element[] {
  switch (loc.by) {
    case 'testid':
      return byAttribute(root, 'data-testid', loc.value, true);
    case 'role':
      return byRole(root, loc.value, loc.name, loc.exact);
    case 'label':
      return byLabel(root, loc.value, loc.exact);
    case 'placeholder':
      return byAttribute(root, 'placeholder', loc.value, loc.exact);
    case 'text':
      return byText(root, loc.value, loc.exact);
    case 'alt':
      return byAttribute(root, 'alt', loc.value, loc.exact);
    case 'title':
      return byAttribute(root, 'title', loc.value, loc.exact);
    case 'css':
      return pierce(root, loc.value);
    case 'xpath':
      return byXpath(root, loc.value);
    default:
      throw new Error(`unknown locator strategy ${loc.by}`);
  }
}
