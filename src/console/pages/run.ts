// One run, live: its facts, the run machine beside its one time line (transitions, OTP frames,
// durable writes; run-inspector.ts) with a scrubber to travel through it, and every step (outcome,
// error, actual, locators, console errors, evidence through signed links, when its frames left and
// arrived) as it stood at the chosen transition.
import type Koa from 'koa';
import { type StepPlace, stepName, stepPlace } from '../../../machines/step-names.js';
import { isFinalRunStatus } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';
import { locatorPhrase, stepSentence } from '../../otp/protocol/sentences.js';
import { QUEUE_CLASSES, type QueueClass } from '../../otp/queue/model.js';
import { startsIn } from '../../otp/queue/words.js';
import type { RunView, StepAttemptView, StepView } from '../../otp/store/run-views.js';
import type { ConsoleData } from '../data.js';
import { clock, duration, gap, type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';
import { between, runTimeline, type StepFrames } from '../run-timeline.js';
import { compareForm } from './compare.js';
import { triageSection } from './failures.js';
import { runInspector } from './run-inspector.js';

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

async function evidenceCell(
  data: ConsoleData,
  principal: Principal,
  step: StepView,
  place: StepPlace,
  origin: string,
): Promise<Html> {
  const evidence = step.evidence as StepEvidence | null;
  if (!evidence) return html``;
  const shots = new Map<string, { name: string; contentType: string }>();
  if (evidence.screenshotAssetId)
    shots.set(evidence.screenshotAssetId, { name: 'screenshot', contentType: 'image/png' });
  for (const f of evidence.files ?? []) shots.set(f.assetId, { name: f.name, contentType: f.contentType });
  const links = await Promise.all(
    [...shots].map(async ([assetId, file]) => {
      const url = await data.signedUrl(principal, assetId, origin).catch(() => null);
      if (!url) return html`<div class="muted">${file.name}: not available</div>`;
      const image = file.contentType.startsWith('image/');
      return html`<div class="shot"><a href="${url}" target="_blank" rel="noopener" data-asset="${assetId}">Open ${file.name}</a>${image ? html`<img src="${url}" alt="Evidence of ${stepName(place)}: ${file.name}" loading="lazy">` : ''}</div>`;
    }),
  );
  return html`${links}${evidence.note ? html`<div class="muted">${evidence.note}</div>` : ''}`;
}

/** When the step's frames left and arrived, and the gaps between them (the service's part is the last). */
function framesCell(f: StepFrames | undefined): Html {
  if (!f?.exec && !f?.decided) return html``;
  const byExecutor = f.decided?.by === 'executor';
  return html`<dl class="frames">
    ${f.exec ? html`<dt>sent</dt><dd>${clock(f.exec.at)}${f.resent ? ` (again ×${f.resent})` : ''}</dd>` : ''}
    ${f.decided ? html`<dt>${byExecutor ? 'result' : 'decided'}</dt><dd>${byExecutor ? gap(between(f.exec, f.decided)) : 'by the service'}</dd>` : ''}
    ${f.written ? html`<dt>durable</dt><dd>${gap(between(f.decided, f.written))}</dd>` : ''}
    ${f.next && byExecutor ? html`<dt title="from this step.result arriving to the next step.exec leaving">next sent</dt><dd>${gap(between(f.decided, f.next))}</dd>` : ''}
  </dl>`;
}

async function stepRow(
  data: ConsoleData,
  principal: Principal,
  step: StepView,
  place: StepPlace,
  origin: string,
  f: StepFrames | undefined,
  earlier: StepAttemptView[],
): Promise<Html> {
  const error = step.error as StepError | null;
  const evidence = step.evidence as StepEvidence | null;
  const details: Html[] = [];
  // A retried test case: what this step did in the attempts before (the row shows the last).
  for (const a of earlier) {
    const e = a.error as StepError | null;
    details.push(
      html`<div class="muted">Attempt ${a.attempt}: ${a.status}${e ? html` <span class="mono">${e.code ?? ''}</span> ${e.message ?? ''}` : ''}</div>`,
    );
  }
  if (error)
    details.push(html`<div><strong class="mono">${error.code ?? 'error'}</strong> ${error.message ?? ''}</div>`);
  if (step.actual !== null) details.push(html`<div>Actual: <code>${step.actual}</code></div>`);
  if (step.usedLocator)
    details.push(html`<div>Found as ${locatorPhrase(step.usedLocator as never)} ${json(step.usedLocator)}</div>`);
  if (error?.triedLocators?.length) {
    details.push(
      html`<div>Tried: <ol>${error.triedLocators.map((l) => html`<li>${locatorPhrase(l as never)} ${json(l)}</li>`)}</ol></div>`,
    );
  }
  if (evidence?.consoleErrors?.length) {
    details.push(
      html`<div>Console errors: <ul>${evidence.consoleErrors.map((e) => html`<li><code>${e}</code></li>`)}</ul></div>`,
    );
  }
  if (step.textReplaced?.length) {
    details.push(
      html`<div class="muted">Text the database cannot hold was stored as U+FFFD (\uFFFD) in: ${step.textReplaced.join(', ')}</div>`,
    );
  }
  const at = (name: string, t: number | undefined) => (t === undefined ? '' : html` data-${name}-t="${t}"`);
  return html`<tr data-step="${step.stepIndex}" data-status="${step.status}"${at('exec', f?.exec?.t)}${at('decided', f?.decided?.t)}${at('written', f?.written?.t)}>
    <td title="${stepName(place)}">${place.position}</td>
    <td>${step.label ? html`<strong>${step.label}</strong><br>` : ''}${stepSentence(step.action as never)}</td>
    <td><span class="final">${statusBadge(step.status)}${step.source === 'service' ? html` <span class="muted" title="decided by the service, not the executor">service</span>` : ''}${step.attempt > 1 ? html` <span class="muted" title="its test case failed and ran again">attempt ${step.attempt}</span>` : ''}</span><span class="then" data-then-text></span></td>
    <td>${duration(step.durationMs)}</td>
    <td>${framesCell(f)}</td>
    <td class="step-detail">${details}</td>
    <td>${await evidenceCell(data, principal, step, place, origin)}</td>
  </tr>`;
}

type RunCase = { id: string; title: string; quarantined?: boolean; outcome?: string; failingStepIndex?: number };

/** A test case's row above its steps: its title and its outcome (as GET /otp/runs/{id} says it), and the step that decided it. */
function caseRow(run: RunView, caseIndex: number): Html {
  const c = run.testCases[caseIndex] as RunCase | undefined;
  if (!c) return html``;
  const at =
    c.failingStepIndex === undefined
      ? ''
      : html` <span class="muted">at ${stepName(stepPlace(run.steps, c.failingStepIndex))}</span>`;
  const outcome = c.outcome ? html` <span class="outcome">${statusBadge(c.outcome)}${at}</span>` : '';
  return html`<tr class="case-row" data-case="${caseIndex}"><th colspan="7" scope="rowgroup"><a href="${BASE}/cases/${c.id}">${c.title}</a>${outcome}</th></tr>`;
}

/** Where the run's browser may go (run.start.allowedOrigins): given with the run, or its navigate steps' origins. */
function allowedOrigins(origins: string[] | null | undefined): Html {
  if (!origins?.length) return html`<span class="muted">none: every navigation is blocked</span>`;
  return html`${origins.map((o, i) => html`${i ? ', ' : ''}${o}`)}`;
}

function facts(run: RunView): Html {
  const pair = (term: string, value: Html | string, id?: string) =>
    html`<div><dt>${term}</dt><dd${id ? html` id="${id}"` : ''}>${value}</dd></div>`;
  const session = run.sessionId
    ? html`<a class="mono" href="${BASE}/sessions/${run.sessionId}">${run.sessionId}</a>`
    : html`<span class="mono">${run.requestedSessionId ? `${run.requestedSessionId} (asked for)` : 'any ready session'}</span>`;
  return html`<dl class="facts">
    ${pair('Status', html`${statusBadge(run.status)}${run.cancelRequested && !isFinalRunStatus(run.status) ? ' cancelling…' : ''}`, 'run-status')}
    ${pair('Steps', `${run.counts.passed} passed · ${run.counts.failed} failed · ${run.counts.skipped} skipped of ${run.counts.total}${run.counts.flaky ? ` · ${run.counts.flaky} test case${run.counts.flaky > 1 ? 's' : ''} flaky (passed on a retry)` : ''}`)}
    ${pair('Test cases', html`${run.testCases.map((c: RunCase, i: number) => html`${i ? ', ' : ''}<a href="${BASE}/cases/${c.id}">${c.title}</a>${c.outcome ? html` ${statusBadge(c.outcome)}` : ''}${c.quarantined ? html` <span class="badge s-quarantined" title="Quarantined when the run started: its failures do not fail the verdict">quarantined</span>` : ''}`)}`)}
    ${quarantineNote(run)}
    ${pair('Session', session)}
    ${queueFacts(run, pair)}
    ${run.startedAt ? '' : pair('Created', time(run.createdAt))}
    ${pair('Started', time(run.startedAt))}
    ${run.finishedAt ? pair('Finished', time(run.finishedAt)) : ''}
    ${pair('Duration', duration(run.durationMs))}
    ${run.reason ? pair('Reason', run.reason) : ''}
    ${run.varNames.length ? pair('Variables', run.varNames.join(', ')) : ''}
    ${pair('Allowed origins', allowedOrigins(run.allowedOrigins), 'allowed-origins')}
  </dl>`;
}

/** Its queue group and class, and while it waits, its position and estimated start (docs/queues.md). */
function queueFacts(run: RunView, pair: (term: string, value: Html | string, id?: string) => Html): Html | string {
  const group = run.group ? pair('Queue group', `${run.group} (${run.priority ?? 'normal'})`, 'run-group') : '';
  const superseded = run.supersededBy
    ? pair('Superseded by', html`<a class="mono" href="${BASE}/runs/${run.supersededBy}">${run.supersededBy}</a>`)
    : '';
  if (!run.queue) return html`${group}${superseded}`;
  const { position, estimatedStart } = run.queue;
  const ahead = position === 0 ? 'next to start' : `${position} run${position === 1 ? '' : 's'} ahead`;
  const when = estimatedStart
    ? html`, starts ${startsIn(estimatedStart, Date.now())} <span class="muted">(between ${time(estimatedStart.from)} and ${time(estimatedStart.to)})</span>`
    : ' (no estimate yet: no open session, or no finished run to go by)';
  return html`${group}${pair('Queue', html`${ahead}${when}`, 'run-queue')}`;
}

/** A verdict that left failures of quarantined test cases out says so beside it. */
function quarantineNote(run: RunView): Html | string {
  const quarantined = run.testCases.filter((c: { quarantined?: boolean }) => c.quarantined);
  if (!quarantined.length) return '';
  const indexes = new Set(
    run.testCases.flatMap((c: { quarantined?: boolean }, i: number) => (c.quarantined ? [i] : [])),
  );
  const failed = run.steps.filter(
    (s) => indexes.has(s.caseIndex) && (s.status === 'fail' || s.status === 'error'),
  ).length;
  return html`<div><dt>Quarantine</dt><dd id="run-quarantine">${quarantined.length} test case${quarantined.length === 1 ? '' : 's'} quarantined: ${failed} failed step${failed === 1 ? '' : 's'} left out of the verdict</dd></div>`;
}

export async function runFragment(
  data: ConsoleData,
  principal: Principal,
  runId: string,
  origin: string,
  notice?: Html,
): Promise<Html> {
  const [run, trace] = await Promise.all([data.runs.read(principal, runId), data.runs.trace(principal, runId)]);
  const active = !isFinalRunStatus(run.status);
  const { rows, steps: frames } = runTimeline(trace, run);
  const [steps, compare, triage] = await Promise.all([
    Promise.all(
      run.steps.map(async (s, i) => {
        const row = await stepRow(
          data,
          principal,
          s,
          stepPlace(run.steps, s.stepIndex),
          origin,
          frames.get(s.stepIndex),
          (run.earlierAttempts ?? []).filter((a) => a.stepIndex === s.stepIndex),
        );
        // Each test case's steps under a row that names it and says its outcome.
        return i === 0 || run.steps[i - 1]!.caseIndex !== s.caseIndex ? html`${caseRow(run, s.caseIndex)}${row}` : row;
      }),
    ),
    compareForm(data, principal, run),
    triageSection(data, principal, run),
  ]);
  return html`${notice ?? ''}<section class="card run-facts" aria-labelledby="facts-h"><h2 id="facts-h" class="visually-hidden">Run</h2>${facts(run)}
    <div class="run-actions">${compare}
      ${active ? html`<button type="button" class="danger" hx-post="${BASE}/f/runs/${run.id}/cancel" hx-target="#content" hx-swap="innerMorph">Cancel run</button>` : ''}</div>
  </section>
  ${triage}
  ${runInspector(trace, rows, active)}
  <h2 id="steps-h">Steps <span class="muted as-of" data-as-of></span></h2>
  <table id="steps" aria-labelledby="steps-h"><thead><tr><th scope="col">#</th><th scope="col">Step</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Frames</th><th scope="col">Details</th><th scope="col">Evidence</th></tr></thead>
    <tbody>${steps}</tbody></table>`;
}

export async function startRun(
  ctx: Koa.Context,
  data: ConsoleData,
  principal: Principal,
  form: URLSearchParams,
): Promise<Html> {
  const what = form.get('what') ?? '';
  const request = /^tc_[A-Za-z0-9]{1,60}$/.test(what)
    ? { testCaseIds: [what] }
    : /^tp_[A-Za-z0-9]{1,60}$/.test(what)
      ? { planId: what }
      : null;
  if (!request) throw errors.validation('Choose a test case or a plan to run');
  // The case page's fields: var.<name>=value for each {{variable}} its steps use.
  const vars: Record<string, string> = {};
  for (const [name, value] of form) if (name.startsWith('var.')) vars[name.slice(4)] = value;
  const queue = queueFields(form);
  const run = await data.runs.start(principal, {
    ...request,
    ...queue,
    ...(Object.keys(vars).length ? { vars } : {}),
  });
  // htmx follows this header with a full navigation to the new run's page.
  ctx.set('HX-Redirect', `${BASE}/runs/${run.id}`);
  return html`Started <a href="${BASE}/runs/${run.id}">${run.id}</a>`;
}

/** The form's queue group and priority (docs/queues.md), as POST /otp/runs takes them; none when left empty. */
function queueFields(form: URLSearchParams): { group?: string; priority?: QueueClass } {
  const group = form.get('group')?.trim() ?? '';
  const priority = form.get('priority') ?? '';
  if (group.length > 200) throw errors.validation('A queue group is at most 200 characters');
  if (priority && !(QUEUE_CLASSES as readonly string[]).includes(priority))
    throw errors.validation(`Priority is one of ${QUEUE_CLASSES.join(', ')}`);
  return { ...(group ? { group } : {}), ...(priority ? { priority: priority as QueueClass } : {}) };
}

export async function cancelRun(data: ConsoleData, principal: Principal, runId: string, origin: string): Promise<Html> {
  const run = await data.runs.cancel(principal, runId);
  return runFragment(
    data,
    principal,
    runId,
    origin,
    html`<p class="notice" role="status">Cancel asked: the run is ${run.status}.</p>`,
  );
}
