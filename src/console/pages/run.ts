// One run, live: its facts, every step (outcome, error, actual, locators, console errors, evidence
// through signed links), the run machine drawn with the run's path on it, and its transitions.
import type Koa from 'koa';
import { html, raw, duration, time, statusBadge, type Html } from '../html.js';
import type { ConsoleData } from '../data.js';
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';
import { BASE } from '../layout.js';
import { stepSentence, locatorPhrase } from '../sentences.js';
import { highlighted } from '../diagram.js';
import type { RunView, StepView } from '../../otp/store/run-views.js';
import type { RunTrace } from '../../otp/store/run-trace.js';
import { isFinalRunStatus } from '../../../machines/types.js';

interface StepError {
  code?: string;
  message?: string;
  triedLocators?: unknown[];
}

interface StepEvidence {
  screenshotAssetId?: string;
  consoleErrors?: string[];
  note?: string;
  files?: Array<{ assetId: string; name: string; kind: string | null; contentType: string }>;
}

const json = (value: unknown) => html`<code>${JSON.stringify(value)}</code>`;

async function evidenceCell(data: ConsoleData, principal: Principal, step: StepView, origin: string): Promise<Html> {
  const evidence = step.evidence as StepEvidence | null;
  if (!evidence) return html``;
  const shots = new Map<string, { name: string; contentType: string }>();
  if (evidence.screenshotAssetId) shots.set(evidence.screenshotAssetId, { name: 'screenshot', contentType: 'image/png' });
  for (const f of evidence.files ?? []) shots.set(f.assetId, { name: f.name, contentType: f.contentType });
  const links = await Promise.all(
    [...shots].map(async ([assetId, file]) => {
      const url = await data.signedUrl(principal, assetId, origin).catch(() => null);
      if (!url) return html`<div class="muted">${file.name}: not available</div>`;
      const image = file.contentType.startsWith('image/');
      return html`<div class="shot"><a href="${url}" target="_blank" rel="noopener" data-asset="${assetId}">Open ${file.name}</a>${image ? html`<img src="${url}" alt="Evidence of step ${step.stepIndex + 1}: ${file.name}" loading="lazy">` : ''}</div>`;
    }),
  );
  return html`${links}${evidence.note ? html`<div class="muted">${evidence.note}</div>` : ''}`;
}

async function stepRow(data: ConsoleData, principal: Principal, step: StepView, origin: string): Promise<Html> {
  const error = step.error as StepError | null;
  const evidence = step.evidence as StepEvidence | null;
  const details: Html[] = [];
  if (error) details.push(html`<div><strong class="mono">${error.code ?? 'error'}</strong> ${error.message ?? ''}</div>`);
  if (step.actual !== null) details.push(html`<div>Actual: <code>${step.actual}</code></div>`);
  if (step.usedLocator) details.push(html`<div>Found as ${locatorPhrase(step.usedLocator as never)} ${json(step.usedLocator)}</div>`);
  if (error?.triedLocators?.length) {
    details.push(html`<div>Tried: <ol>${error.triedLocators.map((l) => html`<li>${locatorPhrase(l as never)} ${json(l)}</li>`)}</ol></div>`);
  }
  if (evidence?.consoleErrors?.length) {
    details.push(html`<div>Console errors: <ul>${evidence.consoleErrors.map((e) => html`<li><code>${e}</code></li>`)}</ul></div>`);
  }
  if (step.textReplaced?.length) {
    details.push(html`<div class="muted">Text the database cannot hold was stored as U+FFFD (\uFFFD) in: ${step.textReplaced.join(', ')}</div>`);
  }
  return html`<tr data-step="${step.stepIndex}" data-status="${step.status}">
    <td>${step.stepIndex + 1}</td>
    <td>${step.label ? html`<strong>${step.label}</strong><br>` : ''}${stepSentence(step.action as never)}</td>
    <td>${statusBadge(step.status)}${step.source === 'service' ? html` <span class="muted" title="decided by the service, not the executor">service</span>` : ''}</td>
    <td>${duration(step.durationMs)}</td>
    <td class="step-detail">${details}</td>
    <td>${await evidenceCell(data, principal, step, origin)}</td>
  </tr>`;
}

function timeline(trace: RunTrace): Html {
  if (!trace.transitions.length) return html`<p class="muted">No transitions recorded yet.</p>`;
  return html`<div class="timeline"><table><caption class="muted">${trace.transitions.length} transitions${trace.dropped ? `, ${trace.dropped} older ones dropped` : ''}${trace.live ? '' : ' (as last written)'}</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Event</th><th scope="col">From</th><th scope="col">To</th></tr></thead>
    <tbody>${trace.transitions.map((t, i) => html`<tr><td>${trace.dropped + i + 1}</td><td>${time(t.at)}</td><td class="mono">${t.event}</td><td>${t.from ?? html`<span class="muted">start</span>`}</td><td>${t.to}</td></tr>`)}</tbody>
  </table></div>`;
}

/** Where the run's browser may go (run.start.allowedOrigins): given with the run, or its navigate steps' origins. */
function allowedOrigins(origins: string[] | null | undefined): Html {
  if (!origins?.length) return html`<span class="muted">none: every navigation is blocked</span>`;
  return html`${origins.map((o, i) => html`${i ? ', ' : ''}${o}`)}`;
}

function facts(run: RunView): Html {
  return html`<dl class="facts">
    <dt>Status</dt><dd id="run-status">${statusBadge(run.status)}${run.cancelRequested && !isFinalRunStatus(run.status) ? ' cancelling…' : ''}</dd>
    <dt>Steps</dt><dd>${run.counts.passed} passed · ${run.counts.failed} failed · ${run.counts.skipped} skipped of ${run.counts.total}</dd>
    <dt>Test cases</dt><dd>${run.testCases.map((c: { id: string; title: string }, i: number) => html`${i ? ', ' : ''}<a href="${BASE}/cases/${c.id}">${c.title}</a>`)}</dd>
    <dt>Session</dt><dd class="mono">${run.sessionId ?? (run.requestedSessionId ? `${run.requestedSessionId} (asked for)` : 'any ready session')}</dd>
    <dt>Created</dt><dd>${time(run.createdAt)}</dd>
    <dt>Started</dt><dd>${time(run.startedAt)}</dd>
    <dt>Finished</dt><dd>${time(run.finishedAt)}</dd>
    <dt>Duration</dt><dd>${duration(run.durationMs)}</dd>
    ${run.reason ? html`<dt>Reason</dt><dd>${run.reason}</dd>` : ''}
    ${run.varNames.length ? html`<dt>Variables</dt><dd>${run.varNames.join(', ')}</dd>` : ''}
    <dt>Allowed origins</dt><dd id="allowed-origins" class="mono">${allowedOrigins(run.allowedOrigins)}</dd>
  </dl>`;
}

export async function runFragment(data: ConsoleData, principal: Principal, runId: string, origin: string, notice?: Html): Promise<Html> {
  const [run, trace] = await Promise.all([data.runs.read(principal, runId), data.runs.trace(principal, runId)]);
  const active = !isFinalRunStatus(run.status);
  const steps = await Promise.all(run.steps.map((s) => stepRow(data, principal, s, origin)));
  return html`${notice ?? ''}<div class="run-top">
    <section class="card" aria-labelledby="facts-h"><h2 id="facts-h">Run</h2>${facts(run)}
      ${active ? html`<p><button type="button" class="danger" hx-post="${BASE}/f/runs/${run.id}/cancel" hx-target="#content" hx-swap="innerMorph">Cancel run</button></p>` : ''}
    </section>
    <section class="card" aria-labelledby="machine-h"><h2 id="machine-h">Run machine</h2>
      <div class="diagram" id="run-diagram">${raw(highlighted("run", trace.transitions))}</div>
      <p class="muted">Current state outlined in amber; states and transitions the run went through in blue.</p>
    </section>
  </div>
  <h2>Steps</h2>
  <table id="steps"><thead><tr><th scope="col">#</th><th scope="col">Step</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Details</th><th scope="col">Evidence</th></tr></thead>
    <tbody>${steps}</tbody></table>
  <h2>Transitions of the run machine</h2>
  ${timeline(trace)}`;
}

export async function startRun(ctx: Koa.Context, data: ConsoleData, principal: Principal, form: URLSearchParams): Promise<Html> {
  const what = form.get('what') ?? '';
  const request = /^tc_[A-Za-z0-9]{1,60}$/.test(what) ? { testCaseIds: [what] } : /^tp_[A-Za-z0-9]{1,60}$/.test(what) ? { planId: what } : null;
  if (!request) throw errors.validation('Choose a test case or a plan to run');
  // The case page's fields: var.<name>=value for each {{variable}} its steps use.
  const vars: Record<string, string> = {};
  for (const [name, value] of form) if (name.startsWith('var.')) vars[name.slice(4)] = value;
  const run = await data.runs.start(principal, Object.keys(vars).length ? { ...request, vars } : request);
  // htmx follows this header with a full navigation to the new run's page.
  ctx.set('HX-Redirect', `${BASE}/runs/${run.id}`);
  return html`Started <a href="${BASE}/runs/${run.id}">${run.id}</a>`;
}

export async function cancelRun(data: ConsoleData, principal: Principal, runId: string, origin: string): Promise<Html> {
  const run = await data.runs.cancel(principal, runId);
  return runFragment(data, principal, runId, origin, html`<p class="notice" role="status">Cancel asked: the run is ${run.status}.</p>`);
}
