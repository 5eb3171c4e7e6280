// The in-page half of `otp-runner record` (docs/recording.md), injected into every frame of the
// recording's browser context with context.addInitScript. It turns each trusted user action into one
// test case step ({ otp, label? }) with ranked locator candidates, each checked to match exactly one
// element at the moment of the action, and hands it to Node through the binding __otpRecord.
// Plain browser JavaScript on purpose: it runs in the page as written (a transpiled function would
// carry the transpiler's helpers with it). Typed text in sensitive fields never leaves the page.
(() => {
  if (window.__otpRecorderInstalled) return;
  window.__otpRecorderInstalled = true;

  // Steps are numbered per document, so that Node can tell when it has seen all of them (settle()).
  const doc = Math.random().toString(36).slice(2);
  let seq = 0;
  const send = (step, extra) => {
    seq += 1;
    // The binding answers a promise; nothing to wait for.
    window.__otpRecord({ doc, seq, step, at: new Date().toISOString(), ...extra }).catch(() => {});
  };

  // ---- locators, ranked: testid > role+name > label > placeholder > alt > text > title > css ----

  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const all = () => document.querySelectorAll('body *');
  const countWhere = (pred) => {
    let n = 0;
    for (const el of all()) if (pred(el)) n += 1;
    return n;
  };

  function hidden(el) {
    if (el.closest('[aria-hidden="true"]')) return true;
    if (typeof el.checkVisibility === 'function') return !el.checkVisibility({ visibilityProperty: true });
    const style = getComputedStyle(el);
    return style.display === 'none' || style.visibility === 'hidden';
  }

  const TEXT_INPUTS = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'number', 'password']);
  function isTextField(el) {
    if (el.isContentEditable) return true;
    if (el.localName === 'textarea') return true;
    return el.localName === 'input' && TEXT_INPUTS.has((el.getAttribute('type') || '').toLowerCase());
  }

  /** The ARIA role, explicit or implied by the element (the common cases only; null when unsure). */
  function roleOf(el) {
    const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit) return explicit;
    const tag = el.localName;
    if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return 'link';
    if (tag === 'button') return 'button';
    if (tag === 'textarea') return 'textbox';
    if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    if (/^h[1-6]$/.test(tag)) return 'heading';
    if (tag === 'img' && el.getAttribute('alt')) return 'img';
    if (tag === 'option') return 'option';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
      if (type === 'checkbox' || type === 'radio') return type;
      if (type === 'search') return el.hasAttribute('list') ? 'combobox' : 'searchbox';
      if (['text', 'email', 'tel', 'url'].includes(type)) return el.hasAttribute('list') ? 'combobox' : 'textbox';
      if (type === 'number') return 'spinbutton';
      if (type === 'range') return 'slider';
    }
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

  function labelledBy(el) {
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
  const labelTexts = (el) => [...(el.labels || [])].map((l) => norm(l.innerText || l.textContent)).filter(Boolean);

  /** The accessible name as Playwright's getByRole sees it, for the cases above; '' when unsure. */
  function nameOf(el, role) {
    const byIds = labelledBy(el);
    if (byIds) return byIds;
    const aria = norm(el.getAttribute('aria-label'));
    if (aria) return aria;
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (['button', 'submit', 'reset'].includes(type))
        return norm(el.value) || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
      if (type === 'image') return norm(el.getAttribute('alt'));
      const labels = labelTexts(el);
      return labels.length ? labels.join(' ') : '';
    }
    if (tag === 'img') return norm(el.getAttribute('alt'));
    if (NAME_FROM_CONTENT.has(role)) return norm(el.innerText || el.textContent);
    return '';
  }

  /** Texts getByLabel matches an element by: its labels, aria-labelledby, aria-label. */
  function labelsOf(el) {
    const texts = labelTexts(el);
    const byIds = labelledBy(el);
    if (byIds) texts.push(byIds);
    const aria = norm(el.getAttribute('aria-label'));
    if (aria) texts.push(aria);
    return texts;
  }

  const ownText = (el) => norm(el.textContent);
  /** The element with this exact text, and none of its children has it alone (as getByText picks). */
  function textMatch(el, text) {
    if (['script', 'style', 'noscript', 'template'].includes(el.localName)) return false;
    if (ownText(el) !== text) return false;
    for (const child of el.children) if (ownText(child) === text) return false;
    return true;
  }

  const attrCount = (name, value) => countWhere((el) => el.getAttribute(name) === value);

  function cssPath(el) {
    const unique = (sel) => {
      try {
        return document.querySelectorAll(sel).length === 1;
      } catch {
        return false;
      }
    };
    if (el.id && unique(`#${CSS.escape(el.id)}`)) return `#${CSS.escape(el.id)}`;
    const parts = [];
    for (let cur = el; cur && cur.nodeType === 1 && cur !== document.documentElement; cur = cur.parentElement) {
      if (cur !== el && cur.id && unique(`#${CSS.escape(cur.id)}`)) {
        parts.unshift(`#${CSS.escape(cur.id)}`);
        break;
      }
      let part = cur.localName;
      const parent = cur.parentElement;
      if (parent) {
        const same = [...parent.children].filter((c) => c.localName === cur.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(cur) + 1})`;
      }
      parts.unshift(part);
    }
    return parts.join(' > ');
  }

  const MAX_TEXT = 80;

  /** Every strategy that finds exactly this element now, best first; css always comes last. */
  function candidatesOf(el) {
    const out = [];
    const add = (locator, count) => {
      if (count === 1) out.push(locator);
    };
    const testid = el.getAttribute('data-testid');
    if (testid) add({ by: 'testid', value: testid }, attrCount('data-testid', testid));
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

  const locatorOf = (el) => {
    const candidates = candidatesOf(el);
    return candidates.length === 1 ? candidates[0] : { candidates };
  };

  // ---- sensitive fields ----

  function isSensitive(el) {
    if (el.localName === 'input' && (el.getAttribute('type') || '').toLowerCase() === 'password') return true;
    const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
    if (/(^|\s)(cc-[a-z-]+|current-password|new-password|one-time-code)(\s|$)/.test(autocomplete)) return true;
    const marked = el.closest('[data-sensitive]');
    return Boolean(marked && marked.getAttribute('data-sensitive') !== 'false');
  }

  // ---- pending input: typed text and select changes, sent once the user moves on ----

  let pendingText = null; // the text field being typed into
  let pendingSelect = null; // { el, step } of the last change of a select
  const lastSent = new WeakMap(); // field -> value last sent, so change after Enter adds nothing

  function flushText() {
    const el = pendingText;
    pendingText = null;
    if (!el?.isConnected) return;
    const value = el.isContentEditable ? el.innerText : el.value;
    if (lastSent.get(el) === value) return;
    lastSent.set(el, value);
    const locator = locatorOf(el);
    if (isSensitive(el)) {
      // The value stays here: Node puts {{secret_N}} in its place, one N per field.
      send({ otp: { action: 'type', locator, text: '', clear: true } }, { secret: cssPath(el) });
    } else {
      send({ otp: { action: 'type', locator, text: value, clear: true } });
    }
  }

  function flushSelect() {
    const pending = pendingSelect;
    pendingSelect = null;
    if (pending) send(pending.step);
  }

  function flush() {
    flushText();
    flushSelect();
    return { doc, seq };
  }
  window.__otpRecorderFlush = flush;

  // ---- listeners, all in the capture phase (before the page's own handlers can stop them) ----

  const CLICKABLE =
    'button, a[href], input, select, textarea, label, summary, option, [role], [data-testid], [onclick], [contenteditable=""], [contenteditable="true"]';
  const targetOf = (event) => {
    const raw = event.composedPath ? event.composedPath()[0] : event.target;
    const el = raw && raw.nodeType === 1 ? raw : raw?.parentElement;
    return el ? el.closest(CLICKABLE) || el : null;
  };
  const modifiersOf = (e) => ['Alt', 'Control', 'Meta', 'Shift'].filter((m) => e[`${m.toLowerCase()}Key`]);
  let forwardedFromLabel = null; // a label click is followed by a click on its control: record that one

  addEventListener(
    'click',
    (e) => {
      const el = targetOf(e);
      if (!el) return;
      const forwarded = el === forwardedFromLabel;
      forwardedFromLabel = null;
      if (!e.isTrusted && !forwarded) return;
      if (el !== pendingText) flushText();
      flushSelect();
      if (e.detail === 2) return; // the second click of a double click: the dblclick step stands for it
      if (el.localName === 'label' && el.control) {
        // The browser clicks the control next: that click is the step.
        forwardedFromLabel = el.control;
        return;
      }
      if (el.localName === 'select' || el.localName === 'option') return; // the change says what was picked
      if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
        // The control has already changed state when its click is dispatched.
        send({ otp: { action: el.checked ? 'check' : 'uncheck', locator: locatorOf(el) } });
        return;
      }
      const modifiers = modifiersOf(e);
      send({ otp: { action: 'click', locator: locatorOf(el), ...(modifiers.length ? { modifiers } : {}) } });
    },
    true,
  );

  addEventListener(
    'dblclick',
    (e) => {
      const el = targetOf(e);
      if (el && e.isTrusted) send({ otp: { action: 'dblclick', locator: locatorOf(el) } });
    },
    true,
  );

  addEventListener(
    'contextmenu',
    (e) => {
      const el = targetOf(e);
      if (!el || !e.isTrusted) return;
      flush();
      send({ otp: { action: 'rightClick', locator: locatorOf(el) } });
    },
    true,
  );

  addEventListener(
    'input',
    (e) => {
      const el = e.composedPath ? e.composedPath()[0] : e.target;
      if (!e.isTrusted || !el || !isTextField(el)) return;
      if (pendingText && pendingText !== el) flushText();
      pendingText = el;
    },
    true,
  );

  addEventListener(
    'change',
    (e) => {
      const el = e.target;
      if (!e.isTrusted || !el) return;
      if (el === pendingText) return flushText();
      if (el.localName === 'select' && !el.multiple && el.selectedIndex >= 0) {
        // Keyboard selection fires one change per arrow key: only the last one before moving on counts.
        const option = el.options[el.selectedIndex];
        const label = norm(option.label || option.textContent);
        const byLabel = label && [...el.options].filter((o) => norm(o.label || o.textContent) === label).length === 1;
        pendingSelect = {
          el,
          step: {
            otp: {
              action: 'select',
              locator: locatorOf(el),
              by: byLabel ? 'label' : 'value',
              value: byLabel ? label : option.value,
            },
          },
        };
      }
    },
    true,
  );

  addEventListener(
    'focusout',
    (e) => {
      if (e.target === pendingText) flushText();
      if (pendingSelect && e.target === pendingSelect.el) flushSelect();
    },
    true,
  );

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

  addEventListener(
    'keydown',
    (e) => {
      if (!e.isTrusted || e.repeat || MODIFIER_KEYS.has(e.key)) return;
      const el = targetOf(e);
      const inField = el && (isTextField(el) || el.localName === 'select');
      const combo = e.ctrlKey || e.metaKey || e.altKey;
      let key = null;
      if (ALWAYS_KEYS.has(e.key)) key = e.key;
      else if (!inField && (NAV_KEYS.has(e.key) || /^F\d{1,2}$/.test(e.key))) key = e.key;
      else if (!inField && combo && e.key.length === 1) key = e.key;
      if (!key) return;
      // The text typed so far goes first: change fires only after this keydown.
      flush();
      const keys = [...modifiersOf(e).filter((m) => m !== 'Shift' || key.length > 1), key];
      const onElement = el && el !== document.body && el !== document.documentElement;
      send({ otp: { action: 'press', key: keys.join('+'), ...(onElement ? { locator: locatorOf(el) } : {}) } });
    },
    true,
  );

  addEventListener('pagehide', flush, true);
  addEventListener('beforeunload', flush, true);
})();
