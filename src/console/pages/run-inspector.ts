// A run's machine and its one time line, side by side: the drawing marked at the chosen transition,
// a scrubber over the trace, and the time line of transitions, OTP frames and durable writes
// (run-timeline.ts). The server marks the newest transition; static/inspect.js moves the marks, the
// selected row and the steps table's "as it stood then" as the reader scrubs, and follows the newest
// transition of a live run until the reader scrubs back.

import type { RunTrace } from '../../otp/store/run-trace.js';
import { type Transition, traceMarks } from '../diagram.js';
import { clock, gap, type Html, html } from '../html.js';
import type { TimelineRow } from '../run-timeline.js';
import { VIEWER_HINT, viewer } from '../viewer.js';

const ARROW: Record<string, string> = { out: '→', in: '←', write: '✓', service: '•' };
const KIND_TITLE: Record<string, string> = {
  out: 'frame sent to the executor',
  in: 'frame from the executor',
  write: 'a durable write answered',
  service: 'decided by the service',
};

/** The scrubber's controls; `live`: a Follow button (pressed while the newest transition is followed). */
export function scrubber(count: number, live: boolean): Html {
  return html`<div class="scrubber" role="group" aria-label="Time travel through the trace">
    <button type="button" class="secondary" data-go="first" aria-label="First transition" title="First transition (Home)">«</button>
    <button type="button" class="secondary" data-go="prev" aria-label="Previous transition" title="Previous transition (←)">‹</button>
    <input type="range" data-scrub min="0" max="${Math.max(0, count - 1)}" value="${Math.max(0, count - 1)}" aria-label="Transition">
    <button type="button" class="secondary" data-go="next" aria-label="Next transition" title="Next transition (→)">›</button>
    <button type="button" class="secondary" data-go="last" aria-label="Last transition" title="Last transition (End)">»</button>
    ${live ? html`<button type="button" class="secondary" data-follow aria-pressed="true" title="Follow the newest transition">Follow live</button>` : ''}
  </div>`;
}

/** A transition's row: what the script reads to mark the drawing (data-from is absent at the start). */
export function transitionRow(
  t: number,
  e: Transition & { at: string },
  previousAt: string | undefined,
  extra?: Html,
): Html {
  const delta = previousAt ? gap(Date.parse(e.at) - Date.parse(previousAt)) : '';
  return html`<tr class="tr" data-t="${t}"${e.from === null ? '' : html` data-from="${e.from}"`} data-to="${e.to}" data-event="${e.event}">
    <td class="num">${t + 1}</td><td>${clock(e.at)}</td><td class="num muted">${delta}</td>
    <td><span class="mono ev">${e.event}</span> <span class="path">${e.from ?? html`<span class="muted">start</span>`} → ${e.to}</span>${extra ?? ''}</td></tr>`;
}

function rowHtml(row: TimelineRow, previousAt: string | undefined): Html {
  if (row.kind === 'transition') return transitionRow(row.t, row.entry!, previousAt);
  return html`<tr class="fr ${row.kind}" data-t="${row.t}"${row.frame ? html` data-frame="${row.frame}"` : ''}>
    <td></td><td>${clock(row.at)}</td><td></td>
    <td><span class="arrow" title="${KIND_TITLE[row.kind]}" aria-label="${KIND_TITLE[row.kind]}">${ARROW[row.kind]}</span> ${row.frame ? html`<code>${row.frame}</code>${row.text.slice(row.frame.length)}` : row.text}</td></tr>`;
}

export function runInspector(trace: RunTrace, rows: TimelineRow[], live: boolean): Html {
  const n = trace.transitions.length;
  let previousAt: string | undefined;
  const body = rows.map((row) => {
    const out = rowHtml(row, previousAt);
    if (row.kind === 'transition') previousAt = row.at;
    return out;
  });
  const last = trace.transitions[n - 1];
  return html`<section class="inspector card" data-inspector${live ? html` data-live="true"` : ''} aria-labelledby="machine-h">
    <div class="inspector-head">
      <h2 id="machine-h">Run machine</h2>
      ${n ? scrubber(n, live) : ''}
      <p class="position" data-position aria-live="polite">${last ? `#${trace.dropped + n} of ${trace.dropped + n}: ${last.event}, ${last.from ?? 'start'} → ${last.to}` : 'The run has not started: no transition yet.'}</p>
    </div>
    <div class="inspector-body">
      ${viewer('run', { id: 'run-diagram', label: 'The run machine', marks: traceMarks(trace.transitions) })}
      <div class="timeline" tabindex="0" aria-label="Time line of the run: transitions, OTP frames and durable writes">
        ${
          n
            ? html`<table><caption class="muted">${n} transitions${trace.dropped ? `, ${trace.dropped} older ones dropped` : ''}${trace.live ? '' : ' (as last written)'}; frames and writes derived from them</caption>
            <thead><tr><th scope="col">#</th><th scope="col">Time (UTC)</th><th scope="col">Since</th><th scope="col">Transition, frame, write</th></tr></thead>
            <tbody>${body}</tbody></table>`
            : html`<p class="muted">No transitions recorded yet.</p>`
        }
      </div>
    </div>
    <p class="muted legend"><span class="key current"></span> state at the chosen transition <span class="key just"></span> the transition just taken <span class="key visited"></span> states and transitions on the way there. → sent to the executor, ← from it, ✓ written durably, • decided by the service. ${VIEWER_HINT}</p>
  </section>`;
}
