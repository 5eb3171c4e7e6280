// Diagrams that zoom and pan, and the inspector beside them: a machine at any transition of its trace.
// No library: the drawing's viewBox is what moves. Everything here is re-applied after each htmx swap
// (a live page is morphed on every change; the drawing itself is kept as it is, hx-morph-skip).
// Loaded as a module (type="module" in layout.ts), so its names are its own without a wrapping function.
const MIN = 0.2;
const MAX = 4;
const STEP = 1.25;
// Fitting to the width never enlarges past this: a small drawing in a wide box stays its own size.
const FIT_MAX = 1.2;
// Fitting may shrink a drawing below its width's fit down to this, when the whole of it then fits
// the window's height: its labels stay readable (12.5 px text at 11 px).
const READABLE = 0.88;
const views = new WeakMap();

// ---- the viewer --------------------------------------------------------------------------------

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

function render(v) {
  const vw = v.viewport.clientWidth,
    vh = v.viewport.clientHeight;
  // Never lose the drawing: at least a margin of it stays in the box.
  const mx = Math.min(80 / v.scale, v.w / 2),
    my = Math.min(80 / v.scale, v.h / 2);
  v.x = clamp(v.x, mx - vw / v.scale, v.w - mx);
  v.y = clamp(v.y, my - vh / v.scale, v.h - my);
  v.svg.setAttribute(
    'viewBox',
    `${v.x.toFixed(1)} ${v.y.toFixed(1)} ${(vw / v.scale).toFixed(1)} ${(vh / v.scale).toFixed(1)}`,
  );
  const level = v.root.querySelector('[data-zoom-level]');
  if (level) level.textContent = `${Math.round(v.scale * 100)}%`;
  v.viewport.dataset.scale = v.scale.toFixed(3);
}

function fit(v) {
  const vw = v.viewport.clientWidth;
  // Beside a time line (an inspector), the box ends within the window (when the page opens at its
  // top), so that the drawing and the rows are seen together; elsewhere the drawing is shown whole.
  const top = v.viewport.getBoundingClientRect().top + window.scrollY;
  const inspector = v.root.closest('[data-inspector]');
  const room = inspector
    ? Math.max(360, window.innerHeight - (top < window.innerHeight * 0.6 ? top : 80) - 16)
    : Infinity;
  let scale = clamp(vw / v.w, MIN, FIT_MAX);
  if (v.h * scale > room && room / v.h >= READABLE) scale = room / v.h;
  v.scale = scale;
  // As tall as the drawing at that scale, up to that room: a taller one moves inside its box.
  v.viewport.style.height = `${Math.min(Math.ceil(v.h * v.scale) + 2, room)}px`;
  // The time line beside it scrolls within the same height.
  const timeline = inspector?.querySelector('.timeline');
  if (timeline) timeline.style.maxHeight = v.viewport.style.height;
  v.x = -Math.max(0, vw / v.scale - v.w) / 2;
  v.y = 0;
  v.fitted = true;
  render(v);
  // In an inspector, the chosen state stays in view (a resize fits the drawing again).
  const current = inspector && v.svg.querySelector('.state.current');
  if (current) reveal(v, current.dataset.state);
}

function zoomAt(v, factor, px, py) {
  const scale = clamp(v.scale * factor, MIN, MAX);
  v.x += px / v.scale - px / scale;
  v.y += py / v.scale - py / scale;
  v.scale = scale;
  v.fitted = false;
  render(v);
}

const zoomCentre = (v, factor) => zoomAt(v, factor, v.viewport.clientWidth / 2, v.viewport.clientHeight / 2);

/** Moves the drawing by (dx, dy) screen pixels; answers whether it moved. */
function pan(v, dx, dy) {
  const x = v.x,
    y = v.y;
  v.x -= dx / v.scale;
  v.y -= dy / v.scale;
  render(v);
  return Math.abs(v.x - x) > 0.01 || Math.abs(v.y - y) > 0.01;
}

/** The wheel moves the drawing only while there is more of it that way; else the page scrolls. */
function scroll(v, dx, dy) {
  const vw = v.viewport.clientWidth / v.scale,
    vh = v.viewport.clientHeight / v.scale;
  const x = clamp(v.x + dx / v.scale, Math.min(v.x, 0), Math.max(v.x, v.w - vw));
  const y = clamp(v.y + dy / v.scale, Math.min(v.y, 0), Math.max(v.y, v.h - vh));
  if (Math.abs(x - v.x) < 0.01 && Math.abs(y - v.y) < 0.01) return false;
  v.x = x;
  v.y = y;
  render(v);
  return true;
}

/** Brings a state of the drawing into view when it is not (a live run moves down the machine). */
function reveal(v, path) {
  const box = v.svg.querySelector(`[data-state="${CSS.escape(path)}"] > rect`);
  if (!box) return;
  const b = box.getBBox();
  const vw = v.viewport.clientWidth / v.scale,
    vh = v.viewport.clientHeight / v.scale;
  const inside = b.x >= v.x && b.y >= v.y && b.x + b.width <= v.x + vw && b.y + b.height <= v.y + vh;
  if (inside) return;
  // Centred on the state, but not past the drawing's edges.
  const within = (at, size, view) => clamp(at, Math.min(0, size - view), Math.max(0, size - view));
  if (b.y < v.y || b.y + b.height > v.y + vh) v.y = within(b.y + b.height / 2 - vh / 2, v.h, vh);
  if (b.x < v.x || b.x + b.width > v.x + vw) v.x = within(b.x + b.width / 2 - vw / 2, v.w, vw);
  render(v);
}

function setUp(viewport) {
  if (views.has(viewport)) return views.get(viewport);
  const svg = viewport.querySelector('svg[data-width]');
  if (!svg) return null;
  const root = viewport.closest('[data-viewer]') || viewport;
  const v = {
    root,
    viewport,
    svg,
    w: Number(svg.dataset.width),
    h: Number(svg.dataset.height),
    scale: 1,
    x: 0,
    y: 0,
    fitted: true,
  };
  views.set(viewport, v);
  viewport.classList.add('zoomable');
  for (const button of root.querySelectorAll('[data-zoom]')) {
    button.addEventListener('click', () => {
      const how = button.dataset.zoom;
      if (how === 'fit') fit(v);
      else zoomCentre(v, how === 'in' ? STEP : 1 / STEP);
    });
  }
  viewport.addEventListener('wheel', (event) => onWheel(v, event), { passive: false });
  let drag = null;
  viewport.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    drag = { id: event.pointerId, x: event.clientX, y: event.clientY };
    viewport.setPointerCapture(event.pointerId);
    viewport.classList.add('grabbing');
  });
  viewport.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    pan(v, event.clientX - drag.x, event.clientY - drag.y);
    drag.x = event.clientX;
    drag.y = event.clientY;
    v.fitted = false;
  });
  const end = () => {
    drag = null;
    viewport.classList.remove('grabbing');
  };
  viewport.addEventListener('pointerup', end);
  viewport.addEventListener('pointercancel', end);
  viewport.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] };
    if (event.key === '+' || event.key === '=') zoomCentre(v, STEP);
    else if (event.key === '-' || event.key === '_') zoomCentre(v, 1 / STEP);
    else if (event.key === '0') fit(v);
    else if (moves[event.key]) pan(v, ...moves[event.key]);
    else return;
    // The inspector's arrow keys travel the trace; on the drawing they move it.
    event.preventDefault();
    event.stopPropagation();
  });
  fit(v);
  return v;
}

/** With Ctrl or ⌘ the wheel zooms at the pointer; alone it moves the drawing (Shift: sideways). */
function onWheel(v, event) {
  // A delta in lines is 16 px each, in pages the box's height.
  const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? v.viewport.clientHeight : 1;
  if (event.ctrlKey || event.metaKey) {
    event.preventDefault();
    const r = v.viewport.getBoundingClientRect();
    zoomAt(v, Math.exp(-event.deltaY * unit * 0.002), event.clientX - r.left, event.clientY - r.top);
    return;
  }
  const dx = (event.shiftKey ? event.deltaY : event.deltaX) * unit;
  const dy = (event.shiftKey ? 0 : event.deltaY) * unit;
  if (scroll(v, dx, dy)) event.preventDefault();
}

window.addEventListener('resize', () => {
  document.querySelectorAll('.viewport.zoomable').forEach((viewport) => {
    const v = views.get(viewport);
    if (v?.fitted) fit(v);
    else if (v) render(v);
  });
});

// ---- the inspector: a trace's transitions, one chosen at a time ---------------------------------

const inspectors = new WeakMap();
const MARKS = ['current', 'visited', 'taken', 'just'];

/** The same marks as diagram.ts's traceMarks(), for the transitions up to `upTo`. */
function mark(svg, rows, upTo) {
  for (const el of svg.querySelectorAll(MARKS.map((m) => `.${m}`).join(','))) el.classList.remove(...MARKS);
  const add = (selector, ...classes) => {
    for (const el of svg.querySelectorAll(selector)) el.classList.add(...classes);
  };
  for (let i = 0; i <= upTo; i++) {
    const r = rows[i].dataset;
    const parts = r.to.split('.');
    for (let j = 0; j < parts.length; j++)
      add(`[data-state="${CSS.escape(parts.slice(0, j + 1).join('.'))}"]`, 'visited');
    if (!rows[i].hasAttribute('data-from')) continue;
    const edge = `[data-edge="${CSS.escape(`${r.from || '*'}|${r.to}`)}"]`;
    const classes = i === upTo ? ['taken', 'just'] : ['taken'];
    add(edge, ...classes);
    add(`${edge} [data-event="${CSS.escape(r.event)}"]`, ...classes);
  }
  const current = svg.querySelector(`[data-state="${CSS.escape(rows[upTo].dataset.to)}"]`);
  if (current) {
    current.classList.remove('visited');
    current.classList.add('current');
  }
}

/** A step as it stood after transition `t`: not sent, in flight, decided (not yet durable), durable. */
function stepThen(row, t) {
  const at = (name) => (row.dataset[name] === undefined ? Infinity : Number(row.dataset[name]));
  if (at('writtenT') <= t) return ['done', ''];
  if (at('decidedT') <= t) return ['decided', 'decided, not yet durable'];
  if (at('execT') <= t) return ['inflight', 'in flight'];
  if (row.dataset.execT === undefined && row.dataset.decidedT === undefined) return [null, ''];
  return ['waiting', 'not sent yet'];
}

function apply(ins) {
  const state = inspectors.get(ins);
  const rows = [...ins.querySelectorAll('tr.tr[data-t]')];
  if (!rows.length) return;
  const i = shownIndex(state, rows);
  const row = rows[i];
  const t = Number(row.dataset.t);
  // A new position (the reader's choice, or the newest transition followed) is brought into view,
  // in the drawing and in the time line; a refresh at the same position leaves both as the reader left them.
  const moved = state.shown !== t;
  state.shown = t;
  const viewport = ins.querySelector('.viewport');
  const v = viewport && setUp(viewport);
  if (v) {
    mark(v.svg, rows, i);
    if (moved) reveal(v, row.dataset.to);
  }
  ins.querySelectorAll('tr[data-t]').forEach((r) => {
    const on = Number(r.dataset.t) === t;
    r.classList.toggle('sel', on);
    if (on && r === row) r.setAttribute('aria-current', 'true');
    else r.removeAttribute('aria-current');
  });
  showPosition(ins, rows, i, state.follow);
  showStepsThen(i === rows.length - 1 ? undefined : t);
  if (moved) keepInTimeline(ins, row);
}

/** The row shown: the newest while following (or before any choice), else the chosen one while it is there. */
function shownIndex(state, rows) {
  const newest = rows.length - 1;
  if (state.follow || state.t === null) return newest;
  const i = rows.findIndex((r) => Number(r.dataset.t) === state.t);
  return i < 0 ? newest : i;
}

/** The scrubber, the follow button and the line that says which transition is shown. */
function showPosition(ins, rows, i, following) {
  const range = ins.querySelector('[data-scrub]');
  if (range) {
    range.max = String(rows.length - 1);
    range.value = String(i);
  }
  const follow = ins.querySelector('[data-follow]');
  if (follow) follow.setAttribute('aria-pressed', String(following));
  const position = ins.querySelector('[data-position]');
  if (position) position.textContent = positionText(rows, i);
}

function positionText(rows, i) {
  const row = rows[i];
  const t = Number(row.dataset.t);
  const count = Number(rows[rows.length - 1].dataset.t) + 1;
  const time = row.querySelector('time');
  const at = time ? ` at ${time.textContent}` : '';
  const from = row.hasAttribute('data-from') ? row.dataset.from || 'any state' : 'start';
  const scrubbed = i === rows.length - 1 ? '' : ' (scrubbed back)';
  return `#${t + 1} of ${count}${at}: ${row.dataset.event}, ${from} → ${row.dataset.to}${scrubbed}`;
}

/** The steps of the page as they stood after transition `t`; as they are now when `t` is undefined (the newest). */
function showStepsThen(t) {
  document.querySelectorAll('#steps tr[data-step]').forEach((step) => {
    const [then, text] = t === undefined ? [null, ''] : stepThen(step, t);
    if (then) step.dataset.then = then;
    else delete step.dataset.then;
    const cell = step.querySelector('[data-then-text]');
    if (cell) cell.textContent = text;
  });
  const asOf = document.querySelector('[data-as-of]');
  if (asOf) asOf.textContent = t === undefined ? '' : `as they stood at transition #${t + 1}`;
}

/** Keeps the chosen row in view inside the time line (not the page). */
function keepInTimeline(ins, row) {
  const box = ins.querySelector('.timeline');
  if (!box) return;
  const top = row.offsetTop - (row.closest('table')?.querySelector('thead')?.offsetHeight || 0);
  if (top < box.scrollTop || row.offsetTop + row.offsetHeight > box.scrollTop + box.clientHeight)
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
}

function choose(ins, index) {
  const state = inspectors.get(ins);
  const rows = [...ins.querySelectorAll('tr.tr[data-t]')];
  if (!rows.length) return;
  const i = clamp(index, 0, rows.length - 1);
  state.t = Number(rows[i].dataset.t);
  // A live trace is followed again once the reader comes back to its newest transition.
  state.follow = ins.dataset.live === 'true' && i === rows.length - 1;
  apply(ins);
}

const indexOf = (ins) => {
  const range = ins.querySelector('[data-scrub]');
  return range ? Number(range.value) : 0;
};

function setUpInspector(ins) {
  if (inspectors.has(ins)) return;
  inspectors.set(ins, { follow: true, t: null, shown: null });
  ins.addEventListener('input', (event) => {
    if (event.target.matches('[data-scrub]')) choose(ins, Number(event.target.value));
  });
  ins.addEventListener('click', (event) => {
    const go = event.target.closest('[data-go]');
    const follow = event.target.closest('[data-follow]');
    const row = event.target.closest('tr[data-t]');
    if (go) {
      const n = ins.querySelectorAll('tr.tr[data-t]').length;
      const at = indexOf(ins);
      choose(ins, { first: 0, prev: at - 1, next: at + 1, last: n - 1 }[go.dataset.go]);
    } else if (follow) {
      const state = inspectors.get(ins);
      state.follow = !state.follow;
      apply(ins);
    } else if (row) {
      const rows = [...ins.querySelectorAll('tr.tr[data-t]')];
      choose(
        ins,
        rows.findIndex((r) => r.dataset.t === row.dataset.t),
      );
    }
  });
  ins.addEventListener('keydown', (event) => travel(ins, event));
}

/** ← → (and ↑ ↓ Home End inside the inspector): the previous, next, first, last transition. */
function travel(ins, event, keys) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.target.matches('input, select, textarea')) return;
  const n = ins.querySelectorAll('tr.tr[data-t]').length;
  const at = indexOf(ins);
  const moves = { ArrowLeft: at - 1, ArrowUp: at - 1, ArrowRight: at + 1, ArrowDown: at + 1, Home: 0, End: n - 1 };
  if (!(event.key in moves) || (keys && !keys.includes(event.key))) return;
  event.preventDefault();
  choose(ins, moves[event.key]);
}

// With nothing focused, ← and → travel the page's trace (↑ ↓ still scroll the page).
document.addEventListener('keydown', (event) => {
  const ins = document.querySelector('[data-inspector]');
  if (ins && (document.activeElement === document.body || document.activeElement === null))
    travel(ins, event, ['ArrowLeft', 'ArrowRight']);
});

function refresh() {
  document.querySelectorAll('.viewport').forEach(setUp);
  document.querySelectorAll('[data-inspector]').forEach((ins) => {
    setUpInspector(ins);
    apply(ins);
  });
}

document.addEventListener('htmx:before:settle', refresh);
document.addEventListener('htmx:after:swap', refresh);
document.addEventListener('DOMContentLoaded', refresh);
