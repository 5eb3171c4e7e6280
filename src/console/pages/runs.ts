// The runs of a project, newest first, filtered by status and test case; and the form that starts one.

import { RUN_STATUSES } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import { QUEUE_CLASSES } from '../../otp/queue/model.js';
import type { ConsoleData } from '../data.js';
import { duration, type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

export interface RunsQuery {
  status?: string;
  testCaseId?: string;
}

export function runsFilter(query: Record<string, unknown>): RunsQuery {
  const status =
    typeof query.status === 'string' && (RUN_STATUSES as readonly string[]).includes(query.status)
      ? query.status
      : undefined;
  const testCaseId =
    typeof query.testCaseId === 'string' && /^tc_[A-Za-z0-9]{1,60}$/.test(query.testCaseId)
      ? query.testCaseId
      : undefined;
  return { status, testCaseId };
}

export async function startForm(data: ConsoleData, principal: Principal, selected?: string): Promise<Html> {
  const [cases, plans] = await Promise.all([
    data.artifacts(principal, 'test_case', 200),
    data.artifacts(principal, 'test_plan', 200),
  ]);
  if (!cases.items.length && !plans.items.length)
    return html`<p class="muted">No test cases yet: create one over REST (POST /api/v1/tests/cases) to run it here.</p>`;
  return html`<form class="inline" hx-post="${BASE}/f/runs" hx-target="#start-result" hx-swap="innerHTML">
    <div><label for="start-what">Start a run of</label>
      <select id="start-what" name="what" required>
        ${cases.items.length ? html`<optgroup label="Test cases">${cases.items.map((c) => html`<option value="${c.id}"${c.id === selected ? ' selected' : ''}>${c.title ?? c.id}</option>`)}</optgroup>` : ''}
        ${plans.items.length ? html`<optgroup label="Plans">${plans.items.map((p) => html`<option value="${p.id}"${p.id === selected ? ' selected' : ''}>${p.title ?? p.id} (plan)</option>`)}</optgroup>` : ''}
      </select></div>
    <div><label for="start-priority">Priority</label>
      <select id="start-priority" name="priority">${QUEUE_CLASSES.map((c) => html`<option value="${c}"${c === 'normal' ? ' selected' : ''}>${c}</option>`)}</select></div>
    <div><label for="start-group">Queue group</label>
      <input id="start-group" name="group" maxlength="200" placeholder="this key's own" autocomplete="off"
        title="Runs of one group share its part of the executors (docs/queues.md)"></div>
    <button type="submit">Start run</button>
    <span id="start-result" role="status"></span>
  </form>`;
}

/** Above the live list, loaded once (a refresh of the list must not reset a form being filled in). */
export async function runsControls(data: ConsoleData, principal: Principal, query: RunsQuery): Promise<Html> {
  const cases = await data.artifacts(principal, 'test_case', 200);
  return html`<div class="card">${await startForm(data, principal)}</div>
    <form class="inline" method="get" action="${BASE}/runs" aria-label="Filter runs">
      <div><label for="filter-status">Status</label>
        <select id="filter-status" name="status"><option value="">any</option>${RUN_STATUSES.map((s) => html`<option value="${s}"${s === query.status ? ' selected' : ''}>${s}</option>`)}</select></div>
      <div><label for="filter-case">Test case</label>
        <select id="filter-case" name="testCaseId"><option value="">any</option>${cases.items.map((c) => html`<option value="${c.id}"${c.id === query.testCaseId ? ' selected' : ''}>${c.title ?? c.id}</option>`)}</select></div>
      <button type="submit" class="secondary">Filter</button>
    </form>`;
}

export async function runsFragment(data: ConsoleData, principal: Principal, query: RunsQuery): Promise<Html> {
  const runs = await data.runs.latest(principal, { ...query, limit: 100 });
  const rows = runs.map(
    (r) => html`<tr data-run="${r.id}">
    <td><a href="${BASE}/runs/${r.id}" class="mono">${r.id}</a></td>
    <td class="status">${statusBadge(r.status)}${r.cancelRequested && (r.status === 'running' || r.status === 'queued') ? html` <span class="muted">cancelling</span>` : ''}</td>
    <td>${r.testCases.map((c: { id: string; title: string }, i: number) => html`${i ? ', ' : ''}<a href="${BASE}/cases/${c.id}">${c.title}</a>`)}</td>
    <td>${r.counts.passed} passed · ${r.counts.failed} failed · ${r.counts.skipped} skipped <span class="muted">of ${r.counts.total}</span></td>
    <td>${time(r.createdAt)}</td>
    <td>${duration(r.durationMs)}</td>
  </tr>`,
  );
  return html`${
    rows.length
      ? html`<table><caption class="muted">The newest ${rows.length} run${rows.length === 1 ? '' : 's'}, live</caption>
        <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Test cases</th><th scope="col">Steps</th><th scope="col">Created</th><th scope="col">Duration</th></tr></thead>
        <tbody>${rows}</tbody></table>`
      : html`<p class="card muted">No runs${query.status || query.testCaseId ? ' match these filters' : ' yet'}.</p>`
  }`;
}
