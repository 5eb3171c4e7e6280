// What an element is, as otp-runner's Playwright judges it: visible (a box of some size and a visible
// style), hidden from the accessibility tree, enabled, checked; and what a reader sees of it (text,
// value). Runs in the extension's isolated world of a page.
import { getRole } from 'dom-accessibility-api';

function styleOf(el: Element): CSSStyleDeclaration | undefined {
  return el.ownerDocument.defaultView?.getComputedStyle(el) ?? undefined;
}

function styleVisible(el: Element, style: CSSStyleDeclaration): boolean {
  if (!el.checkVisibility()) return false;
  return style.visibility === 'visible';
}

function textNodeVisible(node: Text): boolean {
  const range = node.ownerDocument.createRange();
  range.selectNode(node);
  const rect = range.getBoundingClientRect();
  return rect.width > 0 && rect.height > 0;
}

/** Playwright's isVisible: a non-empty box and a visible style (display: contents by its children). */
export function isVisible(el: Element): boolean {
  const style = styleOf(el);
  if (!style) return true;
  if (style.display === 'contents') {
    for (let child = el.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 1 && isVisible(child as Element)) return true;
      if (child.nodeType === 3 && textNodeVisible(child as Text)) return true;
    }
    return false;
  }
  if (!styleVisible(el, style)) return false;
  const rect = el.getBoundingClientRect();
  return rect.width > 0 && rect.height > 0;
}

function parentOrHost(el: Element): Element | undefined {
  if (el.parentElement) return el.parentElement;
  const root = el.parentNode;
  return root && root.nodeType === 11 ? ((root as ShadowRoot).host ?? undefined) : undefined;
}

const IGNORED = new Set(['STYLE', 'SCRIPT', 'NOSCRIPT', 'TEMPLATE']);

function underHidden(el: Element): boolean {
  for (let at: Element | undefined = el; at; at = parentOrHost(at)) {
    if (at.parentElement?.shadowRoot && !at.assignedSlot) return true;
    const style = styleOf(at);
    if (!style || style.display === 'none') return true;
    if ((at.getAttribute('aria-hidden') ?? '').toLowerCase() === 'true') return true;
  }
  return false;
}

/** Playwright's isElementHiddenForAria: out of the accessibility tree (getByRole skips such elements). */
export function hiddenForAria(el: Element): boolean {
  if (IGNORED.has(el.nodeName)) return true;
  const style = styleOf(el);
  const slot = el.nodeName === 'SLOT';
  if (style?.display === 'contents' && !slot) {
    for (let child = el.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 1 && !hiddenForAria(child as Element)) return false;
      if (child.nodeType === 3 && textNodeVisible(child as Text)) return false;
    }
    return true;
  }
  const optionInSelect = el.nodeName === 'OPTION' && Boolean(el.closest('select'));
  if (!optionInSelect && !slot && style && !styleVisible(el, style)) return true;
  return underHidden(el);
}

const FORM_CONTROLS = ['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP'];
const ARIA_DISABLED_ROLES = [
  'application',
  'button',
  'composite',
  'gridcell',
  'group',
  'input',
  'link',
  'menuitem',
  'scrollbar',
  'separator',
  'tab',
  'checkbox',
  'columnheader',
  'combobox',
  'grid',
  'listbox',
  'menu',
  'menubar',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'radio',
  'radiogroup',
  'row',
  'rowheader',
  'searchbox',
  'select',
  'slider',
  'spinbutton',
  'switch',
  'tablist',
  'textbox',
  'toolbar',
  'tree',
  'treegrid',
  'treeitem',
];

function inDisabledFieldset(el: Element): boolean {
  const fieldset = el.closest('FIELDSET[DISABLED]');
  if (!fieldset) return false;
  const legend = fieldset.querySelector(':scope > LEGEND');
  return !legend?.contains(el);
}

function ariaDisabledInChain(el: Element): boolean {
  for (let at: Element | undefined = el; at; at = parentOrHost(at)) {
    const value = (at.getAttribute('aria-disabled') ?? '').toLowerCase();
    if (value === 'true') return true;
    if (value === 'false') return false;
  }
  return false;
}

/** Playwright's getAriaDisabled: natively disabled (a fieldset's too), or aria-disabled on a role that has it. */
export function isDisabled(el: Element): boolean {
  if (FORM_CONTROLS.includes(el.nodeName)) {
    if (el.hasAttribute('disabled')) return true;
    if (el.nodeName === 'OPTION' && el.closest('OPTGROUP[DISABLED]')) return true;
    if (inDisabledFieldset(el)) return true;
  }
  return ARIA_DISABLED_ROLES.includes(getRole(el) ?? '') && ariaDisabledInChain(el);
}

const CHECKED_ROLES = ['checkbox', 'menuitemcheckbox', 'option', 'radio', 'switch', 'menuitemradio', 'treeitem'];

/** Checked or not; 'error' for an element that is no checkbox or radio button (as Playwright's isChecked). */
export function checkedState(el: Element): boolean | 'error' {
  if (el.nodeName === 'INPUT' && ['checkbox', 'radio'].includes((el as HTMLInputElement).type))
    return (el as HTMLInputElement).checked;
  if (CHECKED_ROLES.includes(getRole(el) ?? ''))
    return (el.getAttribute('aria-checked') ?? '').toLowerCase() === 'true';
  return 'error';
}

/**
 * Playwright's retarget: a state or value is read of the control an element stands for: the button
 * or checkbox it is inside, or the control of the <label> it is in ('follow-label'; not for visible).
 */
export function retarget(el: Element, followLabel: boolean): Element {
  let at = el;
  const editable = (at as HTMLElement).isContentEditable;
  if (!at.matches('input, textarea, select') && !editable)
    at = at.closest('button, [role=button], [role=checkbox], [role=radio]') ?? at;
  if (
    followLabel &&
    !at.matches(
      'a, input, textarea, button, select, option, optgroup, [role=link], [role=button], [role=checkbox], [role=radio]',
    ) &&
    !(at as HTMLElement).isContentEditable
  ) {
    const label = at.closest('label');
    if (label?.control) at = label.control;
  }
  return at;
}
