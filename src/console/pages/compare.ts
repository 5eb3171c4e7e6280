// Two runs of the same test case side by side: their paths through the run machine (one drawing, each
// run's transitions marked in its own colour, and the two traces aligned row by row) and their step
// results, with the first transition and the first step where they part marked.

import { stepName, stepPlace } from '../../../machines/step-names.js';
import type { Principal } from '../../auth/principal.js';
import { stepSentence } from '../../otp/protocol/sentences.js';
import type { RunTrace } from '../../otp/store/run-trace.js';
import type { RunView, StepView } from '../../otp/store/run-views.js';
import type { ConsoleData } from '../data.js';
import type { Marks } from '../diagram.js';
import { clock, duration, type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';
import { VIEWER_HINT, viewer } from '../viewer.js';

/** On a run's page: the other runs of its (first) test case to compare it with. */
export async function compareForm(data: ConsoleData, principal: Principal, run: RunView): Promise<Html> {
  const testCaseId = run.testCases[0]?.id;
  if (!testCaseId) return html``;
  const others = (await data.runs.latest(principal, { testCaseId, limit: 21 }))
    .filter((r) => r.id !== run.id)
    .slice(0, 20);
  if (!others.length) return html``;
  return html`<form class="inline compare-form" method="get" action="${BASE}/compare">
    <input type="hidden" name="a" value="${run.id}">
    <div><label for="compare-b" title="Another run of the same test case">Compare with</label>
      <select id="compare-b" name="b">${others.map((r) => html`<option value="${r.id}">${r.id} · ${r.status} · ${(r.createdAt ?? '').slice(0, 19).replace('T', ' ')}</option>`)}</select></div>
    <button type="submit" class="secondary">Compare</button>
  </form>`;
}

type Step = Pick<StepView, 'stepIndex' | 'status' | 'action' | 'durationMs' | 'label'> & { error: unknown };

const codeOf = (s: Step | undefined) => (s?.error as { code?: string } | null)?.code ?? '';
const sameAction = (a: Step, b: Step) => JSON.stringify(a.action) === JSON.stringify(b.action);

/** The first step whose action, status or error code differs between two runs (or that one lacks). */
export function firstStepDifference(a: Step[], b: Step[]): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i],
      y = b[i];
    if (!x || !y || !sameAction(x, y) || x.status !== y.status || codeOf(x) !== codeOf(y)) return i;
  }
  return undefined;
}

type Hop = RunTrace['transitions'][number];
const hop = (t: Hop | undefined) => (t ? `${t.event}: ${t.from ?? 'start'} → ${t.to}` : '');

/** The first transition where the two paths part (the index into both traces), when they do. */
export function firstPathDifference(a: Hop[], b: Hop[]): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (hop(a[i]) !== hop(b[i])) return i;
  return undefined;
}

/** Each run's edges and events marked `path-a`, `path-b`, or `path-ab` when both took them. */
function pathMarks(a: Hop[], b: Hop[]): Marks {
  const who = new Map<string, Set<string>>();
  const note = (key: string, run: string) => who.set(key, (who.get(key) ?? new Set()).add(run));
  for (const [run, trace] of [
    ['a', a],
    ['b', b],
  ] as const) {
    for (const t of trace) {
      note(`S:${t.to}`, run);
      if (t.from === null) continue;
      note(`E:${t.from || '*'}|${t.to}`, run);
      note(`V:${t.from || '*'}|${t.to}|${t.event}`, run);
    }
  }
  const marks: Required<Marks> = { states: new Map(), edges: new Map(), events: new Map() };
  for (const [key, runs] of who) {
    const mark = `path-${[...runs].sort().join('')}`;
    const id = key.slice(2);
    (key.startsWith('S:') ? marks.states : key.startsWith('E:') ? marks.edges : marks.events).set(id, mark);
  }
  return marks;
}

/** The first step that differs, named as in A (or B, when A has no such step). */
function differingStep(a: RunView, b: RunView, stepIndex: number): string {
  const run = a.steps[stepIndex] ? a : b;
  return stepName(stepPlace(run.steps, stepIndex, run.testCases));
}

function runCard(label: string, run: RunView): Html {
  return html`<section class="card compare-run" aria-label="Run ${label}">
    <h2><span class="run-key key-${label.toLowerCase()}">${label}</span> <a class="mono" href="${BASE}/runs/${run.id}">${run.id}</a> ${statusBadge(run.status)}</h2>
    <p>${run.counts.passed} passed · ${run.counts.failed} failed · ${run.counts.skipped} skipped of ${run.counts.total} · ${duration(run.durationMs)}</p>
    <p class="muted">Created ${time(run.createdAt)}${run.reason ? html` · ${run.reason}` : ''}</p>
  </section>`;
}

function stepCell(s: Step | undefined): Html {
  if (!s) return html`<td class="muted">no such step</td>`;
  const code = codeOf(s);
  return html`<td>${statusBadge(s.status)} ${duration(s.durationMs)}${code ? html` <code>${code}</code>` : ''}</td>`;
}

export async function compareFragment(
  data: ConsoleData,
  principal: Principal,
  aId: string,
  bId: string,
): Promise<Html> {
  const [a, b, ta, tb] = await Promise.all([
    data.runs.read(principal, aId),
    data.runs.read(principal, bId),
    data.runs.trace(principal, aId),
    data.runs.trace(principal, bId),
  ]);
  const shared = a.testCases.some((c: { id: string }) => b.testCases.some((d: { id: string }) => d.id === c.id));
  const stepDiff = firstStepDifference(a.steps, b.steps);
  const pathDiff = firstPathDifference(ta.transitions, tb.transitions);
  const rows = Array.from({ length: Math.max(a.steps.length, b.steps.length) }, (_, i) => {
    const x = a.steps[i],
      y = b.steps[i];
    const step = (x ?? y)!;
    return html`<tr data-step="${i}"${i === stepDiff ? html` class="first-diff" data-first-diff` : ''}>
      <td>${i + 1}${i === stepDiff ? html`<div class="diff-note">first difference</div>` : ''}</td>
      <td>${step.label ? html`<strong>${step.label}</strong><br>` : ''}${stepSentence(step.action as never)}${x && y && !sameAction(x, y) ? html`<div class="muted">B: ${stepSentence(y.action as never)}</div>` : ''}</td>
      ${stepCell(x)}${stepCell(y)}</tr>`;
  });
  const hops = Array.from({ length: Math.max(ta.transitions.length, tb.transitions.length) }, (_, i) => {
    const x = ta.transitions[i],
      y = tb.transitions[i];
    return html`<tr${i === pathDiff ? html` class="first-diff" data-first-diff` : ''}><td class="num">${i + 1}</td>
      <td>${x ? html`<span class="mono">${x.event}</span> ${x.from ?? 'start'} → ${x.to} <span class="muted">${clock(x.at)}</span>` : ''}</td>
      <td>${y ? html`<span class="mono">${y.event}</span> ${y.from ?? 'start'} → ${y.to} <span class="muted">${clock(y.at)}</span>` : ''}</td></tr>`;
  });
  const summary =
    stepDiff === undefined
      ? 'Their steps agree: same actions, statuses and error codes.'
      : `The steps first differ at ${differingStep(a, b, stepDiff)}: A ${a.steps[stepDiff]?.status ?? 'has no such step'}${codeOf(a.steps[stepDiff]) ? ` (${codeOf(a.steps[stepDiff])})` : ''}, B ${b.steps[stepDiff]?.status ?? 'has no such step'}${codeOf(b.steps[stepDiff]) ? ` (${codeOf(b.steps[stepDiff])})` : ''}.`;
  return html`${shared ? '' : html`<p class="notice" role="status">These runs share no test case: their steps are compared by position.</p>`}
    <div class="grid2">${runCard('A', a)}${runCard('B', b)}</div>
    <p class="notice" id="compare-summary" role="status">${summary}${pathDiff === undefined ? ' Their paths through the run machine are the same.' : ` Their paths part at transition ${pathDiff + 1}.`}</p>
    <h2 id="steps-h">Step results</h2>
    <table id="compare-steps" aria-labelledby="steps-h"><thead><tr><th scope="col">#</th><th scope="col">Step</th><th scope="col">A</th><th scope="col">B</th></tr></thead><tbody>${rows}</tbody></table>
    <h2 id="paths-h">Paths through the run machine</h2>
    <div class="compare-paths">
      <section class="card" aria-labelledby="paths-h">
        ${viewer('run', { id: 'compare-diagram', label: 'The run machine with both paths', marks: pathMarks(ta.transitions, tb.transitions) })}
        <p class="muted legend"><span class="key path-a"></span> only A <span class="key path-b"></span> only B <span class="key path-ab"></span> both. ${VIEWER_HINT}</p>
      </section>
      <div class="timeline" tabindex="0" aria-label="The two traces, transition by transition">
        <table><thead><tr><th scope="col">#</th><th scope="col">A</th><th scope="col">B</th></tr></thead><tbody>${hops}</tbody></table>
      </div>
    </div>`;
}
