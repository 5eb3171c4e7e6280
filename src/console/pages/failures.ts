// Failures: the project's failed steps grouped by cause (GET /ai/failures), newest first, filtered by
// window, status and test case, each with its newest example's screenshot; and the triage of a failed
// run (POST /ai/runs/{id}/triage) as its page shows it.

import { stepName, stepPlace } from '../../../machines/step-names.js';
import type { FailureCluster, RunTriage } from '../../ai/index.js';
import type { Principal } from '../../auth/principal.js';
import type { RunView } from '../../otp/store/run-views.js';
import type { ConsoleData } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

const DAY_MS = 86_400_000;
const WINDOWS = [1, 7, 30, 90] as const;

/** The cluster's newest example, named as every door names a step, its test case linked. */
function exampleStep(c: FailureCluster, titles: ReadonlyMap<string, string>): Html {
  const { example } = c;
  const title = titles.get(example.testCaseId) ?? example.testCaseId;
  const position = example.position === undefined ? undefined : example.position + 1;
  const name = stepName({
    stepIndex: example.stepIndex,
    caseTitle: title,
    ...(position === undefined ? {} : { position }),
  });
  return html`<a href="${BASE}/cases/${example.testCaseId}">${name}</a>`;
}

export interface FailuresFilter {
  days: number;
  status: 'all' | 'new' | 'recurring';
  testCaseId?: string;
  cursor?: string;
}

export function failuresFilter(query: Record<string, unknown>): FailuresFilter {
  const days = WINDOWS.find((d) => String(d) === query.days) ?? 7;
  const status = query.status === 'new' || query.status === 'recurring' ? query.status : 'all';
  const testCaseId =
    typeof query.testCaseId === 'string' && /^tc_[A-Za-z0-9]{1,60}$/.test(query.testCaseId)
      ? query.testCaseId
      : undefined;
  const cursor =
    typeof query.cursor === 'string' && /^[A-Za-z0-9_-]{1,300}$/.test(query.cursor) ? query.cursor : undefined;
  return { days, status, testCaseId, cursor };
}

const categoryBadge = (category: string) =>
  html`<span class="badge c-${category.replace(/[^a-z_]/g, '')}">${category.replace('_', ' ')}</span>`;

async function shot(data: ConsoleData, principal: Principal, cluster: FailureCluster, origin: string): Promise<Html> {
  const assetId = cluster.example.screenshotUrl?.match(/ast_[a-z0-9]+/)?.[0];
  if (!assetId) return html`<span class="muted">no screenshot</span>`;
  const url = await data.signedUrl(principal, assetId, origin).catch(() => null);
  return url
    ? html`<a class="shot" href="${url}" target="_blank" rel="noopener"><img src="${url}" alt="Screenshot of the newest failure of this cause" loading="lazy"></a>`
    : html`<span class="muted">not available</span>`;
}

function cause(c: FailureCluster): Html {
  return html`<div><strong class="mono">${c.code}</strong> <span class="muted">on</span> <code>${c.action}</code>${c.locator ? html` <span class="muted">of</span> <code>${c.locator}</code>` : ''}</div>
    <div class="muted">${c.message}</div><div class="mono muted">${c.signature}</div>`;
}

export async function failuresFragment(
  data: ConsoleData,
  principal: Principal,
  filter: FailuresFilter,
  origin: string,
): Promise<Html> {
  const since = new Date(Date.now() - filter.days * DAY_MS).toISOString();
  const [page, cases] = await Promise.all([
    data.failures(principal, {
      since,
      status: filter.status,
      limit: 50,
      ...(filter.testCaseId ? { testCaseId: filter.testCaseId } : {}),
      ...(filter.cursor ? { cursor: filter.cursor } : {}),
    }),
    data.artifacts(principal, 'test_case', 200),
  ]);
  const titles = new Map(cases.items.map((c) => [c.id, c.title ?? c.id]));
  const rows = await Promise.all(
    page.items.map(
      async (c) => html`<tr data-signature="${c.signature}">
      <td>${cause(c)}</td>
      <td>${c.status === 'new' ? statusBadge('new') : html`<span class="muted">recurring</span>`}</td>
      <td>${c.count} <span class="muted">in ${c.runs} run${c.runs === 1 ? '' : 's'}, ${c.cases} case${c.cases === 1 ? '' : 's'}</span></td>
      <td>${time(c.firstSeen)}<br>${time(c.lastSeen)}</td>
      <td><a href="${BASE}/runs/${c.example.runId}" class="mono">${c.example.runId}</a><br>${exampleStep(c, titles)}</td>
      <td>${await shot(data, principal, c, origin)}</td>
      <td>${c.bugs.length ? c.bugs.map((b) => html`<div><span class="mono">${b.id}</span> ${b.status ? statusBadge(b.status) : ''}<br>${b.title ?? ''}</div>`) : html`<span class="muted">none</span>`}</td>
    </tr>`,
    ),
  );
  const keep = (extra: Record<string, string>) =>
    new URLSearchParams({
      days: String(filter.days),
      status: filter.status,
      ...(filter.testCaseId ? { testCaseId: filter.testCaseId } : {}),
      ...extra,
    }).toString();
  return html`<form class="inline" method="get" action="${BASE}/failures" aria-label="Filter failures">
      <div><label for="f-days">Window</label>
        <select id="f-days" name="days">${WINDOWS.map((d) => html`<option value="${d}"${d === filter.days ? ' selected' : ''}>last ${d} day${d === 1 ? '' : 's'}</option>`)}</select></div>
      <div><label for="f-status">Status</label>
        <select id="f-status" name="status">${(['all', 'new', 'recurring'] as const).map((s) => html`<option value="${s}"${s === filter.status ? ' selected' : ''}>${s === 'new' ? 'new in the window' : s}</option>`)}</select></div>
      <div><label for="f-case">Test case</label>
        <select id="f-case" name="testCaseId"><option value="">any</option>${cases.items.map((c) => html`<option value="${c.id}"${c.id === filter.testCaseId ? ' selected' : ''}>${c.title ?? c.id}</option>`)}</select></div>
      <button type="submit" class="secondary">Filter</button>
    </form>
    ${
      rows.length
        ? html`<table class="failures"><caption class="muted">Failed steps grouped by cause, the newest cause first</caption>
          <thead><tr><th scope="col">Cause</th><th scope="col">Status</th><th scope="col">Failures</th><th scope="col">First / last seen</th><th scope="col">Newest example</th><th scope="col">Screenshot</th><th scope="col">Bugs</th></tr></thead>
          <tbody>${rows}</tbody></table>
          ${page.nextCursor ? html`<p><a href="${BASE}/failures?${keep({ cursor: page.nextCursor })}">Older causes →</a></p>` : ''}`
        : html`<p class="card muted">No failures in the last ${filter.days} day${filter.days === 1 ? '' : 's'}${filter.status !== 'all' || filter.testCaseId ? ' match these filters' : ''}.</p>`
    }`;
}

/** The triage of a finished run with failed cases, for its page; nothing for the others. */
export async function triageSection(data: ConsoleData, principal: Principal, run: RunView): Promise<Html> {
  if (run.status === 'passed' || run.status === 'queued' || run.status === 'running' || run.counts.failed === 0)
    return html``;
  let triage: RunTriage;
  try {
    triage = await data.triage(principal, run.id);
  } catch (err) {
    return html`<section class="card" aria-labelledby="triage-h"><h2 id="triage-h">Triage</h2><p class="error">${(err as Error).message}</p></section>`;
  }
  if (!triage.cases.length) return html``;
  const rows = triage.cases.map(
    (c) => html`<tr data-triage-case="${c.testCaseId}" data-category="${c.category}">
    <td><a href="${BASE}/cases/${c.testCaseId}">${c.title ?? c.testCaseId}</a><div class="muted">${stepName(stepPlace(run.steps, c.stepIndex))}</div></td>
    <td>${categoryBadge(c.category)}<div class="muted">${Math.round(c.confidence * 100)}% · ${c.decidedBy === 'facts' ? 'from the facts' : c.decidedBy === 'rule' ? 'a project rule' : 'a person’s correction'}</div></td>
    <td><ul class="reasons">${c.reasons.map((r) => html`<li>${r}</li>`)}</ul>
      ${c.similar.length ? html`<div class="muted">Earlier: ${c.similar.map((s, i) => html`${i ? ', ' : ''}<a href="${BASE}/runs/${s.runId}">${time(s.occurredAt)}</a>`)}</div>` : ''}</td>
    <td>${c.suggestedAction.replaceAll('_', ' ')}${c.bugs.length ? html`<div class="muted">${c.bugs.map((b) => b.id).join(', ')}</div>` : ''}</td>
  </tr>`,
  );
  return html`<section aria-labelledby="triage-h"><h2 id="triage-h">Triage <span class="muted">why each failed case failed</span></h2>
    <table id="triage"><thead><tr><th scope="col">Test case</th><th scope="col">Category</th><th scope="col">Reasons</th><th scope="col">Suggested</th></tr></thead>
    <tbody>${rows}</tbody></table></section>`;
}
