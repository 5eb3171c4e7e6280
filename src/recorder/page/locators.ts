// Locators of a recorded element, ranked: testid > role+name > label > placeholder > alt > text >
// title > css. Each candidate is kept only when it matches exactly this one element at the moment
// of the action, so a recorded step names what the user acted on and nothing else. Runs in the page
// (the runner's injected script and the extension's content script bundle it); DOM only.

export interface Candidate {
  by: string;
  value: string;
  name?: string;
  exact?: boolean;
}

/** One candidate, or several to be tried in order. */
export type RecordedLocator = Candidate | { candidates: Candidate[] };

export const norm = (s: string | null | undefined): string => (s || '').replace(/\s+/g, ' ').trim();

const all = () => document.querySelectorAll('body *');
function countWhere(pred: (el: Element) => boolean): number {
  let n = 0;
  for (const el of all()) if (pred(el)) n += 1;
  return n;
}

export function hidden(el: Element): boolean {
  if (el.closest('[aria-hidden="true"]')) return true;
  if (typeof el.checkVisibility === 'function') return !el.checkVisibility({ visibilityProperty: true });
  const style = getComputedStyle(el);
  return style.display === 'none' || style.visibility === 'hidden';
}

const TEXT_INPUTS = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'number', 'password']);
export function isTextField(el: Element): el is HTMLInputElement | HTMLTextAreaElement | HTMLElement {
  if ((el as HTMLElement).isContentEditable) return true;
  if (el.localName === 'textarea') return true;
  return el.localName === 'input' && TEXT_INPUTS.has((el.getAttribute('type') || '').toLowerCase());
}

function inputRole(el: Element): string | null {
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
  if (type === 'checkbox' || type === 'radio') return type;
  if (type === 'search') return el.hasAttribute('list') ? 'combobox' : 'searchbox';
  if (['text', 'email', 'tel', 'url'].includes(type)) return el.hasAttribute('list') ? 'combobox' : 'textbox';
  if (type === 'number') return 'spinbutton';
  if (type === 'range') return 'slider';
  return null;
}

/** The ARIA role, explicit or implied by the element (the common cases only; null when unsure). */
export function roleOf(el: Element): string | null {
  const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
  if (explicit) return explicit;
  const tag = el.localName;
  if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return 'link';
  if (tag === 'button') return 'button';
  if (tag === 'textarea') return 'textbox';
  if (tag === 'select') {
    const select = el as HTMLSelectElement;
    return select.multiple || select.size > 1 ? 'listbox' : 'combobox';
  }
  if (/^h[1-6]$/.test(tag)) return 'heading';
  if (tag === 'img' && el.getAttribute('alt')) return 'img';
  if (tag === 'option') return 'option';
  if (tag === 'input') return inputRole(el);
  return null;
}

const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'heading',
  'checkbox',
  'radio',
  'option',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'switch',
  'treeitem',
  'cell',
  'columnheader',
  'rowheader',
]);

function labelledBy(el: Element): string {
  const ids = (el.getAttribute('aria-labelledby') || '').trim();
  if (!ids) return '';
  return norm(
    ids
      .split(/\s+/)
      .map((id) => document.getElementById(id)?.textContent || '')
      .join(' '),
  );
}

/** Texts of the <label>s of a form control. */
function labelTexts(el: Element): string[] {
  const labels = (el as HTMLInputElement).labels;
  return [...(labels || [])].map((l) => norm(l.innerText || l.textContent)).filter(Boolean);
}

function controlName(el: Element): string {
  const type = (el.getAttribute('type') || '').toLowerCase();
  if (['button', 'submit', 'reset'].includes(type))
    return norm((el as HTMLInputElement).value) || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
  if (type === 'image') return norm(el.getAttribute('alt'));
  return labelTexts(el).join(' ');
}

/** The accessible name as Playwright's getByRole sees it, for the cases above; '' when unsure. */
export function nameOf(el: Element, role: string): string {
  const byIds = labelledBy(el);
  if (byIds) return byIds;
  const aria = norm(el.getAttribute('aria-label'));
  if (aria) return aria;
  const tag = el.localName;
  if (tag === 'input' || tag === 'textarea' || tag === 'select') return controlName(el);
  if (tag === 'img') return norm(el.getAttribute('alt'));
  if (NAME_FROM_CONTENT.has(role)) return norm((el as HTMLElement).innerText || el.textContent);
  return '';
}

/** Texts getByLabel matches an element by: its labels, aria-labelledby, aria-label. */
function labelsOf(el: Element): string[] {
  const texts = labelTexts(el);
  const byIds = labelledBy(el);
  if (byIds) texts.push(byIds);
  const aria = norm(el.getAttribute('aria-label'));
  if (aria) texts.push(aria);
  return texts;
}

const ownText = (el: Element) => norm(el.textContent);
/** The element with this exact text, and none of its children has it alone (as getByText picks). */
function textMatch(el: Element, text: string): boolean {
  if (['script', 'style', 'noscript', 'template'].includes(el.localName)) return false;
  if (ownText(el) !== text) return false;
  for (const child of el.children) if (ownText(child) === text) return false;
  return true;
}

const attrCount = (name: string, value: string) => countWhere((el) => el.getAttribute(name) === value);

function uniqueSelector(sel: string): boolean {
  try {
    return document.querySelectorAll(sel).length === 1;
  } catch {
    return false;
  }
}

/** A CSS path to the element: its id when unique, else tags with :nth-of-type up to an element with a unique id. */
export function cssPath(el: Element): string {
  if (el.id && uniqueSelector(`#${CSS.escape(el.id)}`)) return `#${CSS.escape(el.id)}`;
  const parts: string[] = [];
  for (let cur: Element | null = el; cur && cur !== document.documentElement; cur = cur.parentElement) {
    if (cur !== el && cur.id && uniqueSelector(`#${CSS.escape(cur.id)}`)) {
      parts.unshift(`#${CSS.escape(cur.id)}`);
      break;
    }
    let part = cur.localName;
    const parent = cur.parentElement;
    if (parent) {
      const tag = cur.localName;
      const same = [...parent.children].filter((c) => c.localName === tag);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(cur) + 1})`;
    }
    parts.unshift(part);
  }
  return parts.join(' > ');
}

const MAX_TEXT = 80;

/** The candidates by role, label, placeholder and alt. */
function namedCandidates(el: Element, add: (c: Candidate, count: number) => void): void {
  const role = roleOf(el);
  const name = role ? nameOf(el, role) : '';
  if (role && name && name.length <= MAX_TEXT && !hidden(el)) {
    add(
      { by: 'role', value: role, name, exact: true },
      countWhere((o) => roleOf(o) === role && !hidden(o) && nameOf(o, role) === name),
    );
  }
  const label = labelsOf(el)[0];
  if (label && label.length <= MAX_TEXT)
    add(
      { by: 'label', value: label, exact: true },
      countWhere((o) => labelsOf(o).includes(label)),
    );
  const placeholder = el.getAttribute('placeholder');
  if (placeholder) add({ by: 'placeholder', value: placeholder, exact: true }, attrCount('placeholder', placeholder));
  const alt = el.getAttribute('alt');
  if (alt) add({ by: 'alt', value: alt, exact: true }, attrCount('alt', alt));
}

/** Every strategy that finds exactly this element now, best first; css always comes last. */
export function candidatesOf(el: Element): Candidate[] {
  const out: Candidate[] = [];
  const add = (locator: Candidate, count: number) => {
    if (count === 1) out.push(locator);
  };
  const testid = el.getAttribute('data-testid');
  if (testid) add({ by: 'testid', value: testid }, attrCount('data-testid', testid));
  namedCandidates(el, add);
  if (!isTextField(el) && el.localName !== 'select') {
    const text = ownText(el);
    if (text && text.length <= MAX_TEXT && textMatch(el, text))
      add(
        { by: 'text', value: text, exact: true },
        countWhere((o) => textMatch(o, text)),
      );
  }
  const title = el.getAttribute('title');
  if (title) add({ by: 'title', value: title, exact: true }, attrCount('title', title));
  const css = cssPath(el);
  add({ by: 'css', value: css }, document.querySelectorAll(css).length);
  return out;
}

export function locatorOf(el: Element): RecordedLocator {
  const candidates = candidatesOf(el);
  return candidates.length === 1 ? candidates[0]! : { candidates };
}

/** A field whose typed text must never leave the page: passwords, card numbers, one-time codes, data-sensitive. */
export function isSensitive(el: Element): boolean {
  if (el.localName === 'input' && (el.getAttribute('type') || '').toLowerCase() === 'password') return true;
  const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
  if (/(^|\s)(cc-[a-z-]+|current-password|new-password|one-time-code)(\s|$)/.test(autocomplete)) return true;
  const marked = el.closest('[data-sensitive]');
  return Boolean(marked && marked.getAttribute('data-sensitive') !== 'false');
}

/** A selector of an iframe element, for the `frame` member of a step recorded inside it: id, name, title, else src. */
export function iframeSelector(el: Element): string {
  const pick = (): [string, string] => {
    if (el.id) return ['id', el.id];
    const name = el.getAttribute('name');
    if (name) return ['name', name];
    const title = el.getAttribute('title');
    if (title) return ['title', title];
    return ['src', el.getAttribute('src') ?? ''];
  };
  const [attr, value] = pick();
  return `iframe[${attr}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`;
}
