// Releases and each one's readiness on one screen: the verdict, then every rule (passed, failed or
// undefined) with what it does to the verdict and the records behind it (docs/releases.md).

import type { Principal } from '../../auth/principal.js';
import type { ConsoleData, ReadinessView } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

/** The verdict in words, naming the rules behind it. */
function verdictText(r: ReadinessView): string {
  const failed = (effect: string) =>
    r.rules.filter((x) => x.status === 'failed' && x.effect === effect).map((x) => x.title.toLowerCase());
  const [blocks, risks] = [failed('blocks'), failed('risks')];
  if (r.verdict === 'blocked')
    return `Blocked by ${blocks.length} rule${blocks.length === 1 ? '' : 's'}: ${blocks.join('; ')}.${risks.length ? ` At risk on ${risks.length} more.` : ''}`;
  if (r.verdict === 'at_risk')
    return risks.length ? `At risk: ${risks.join('; ')}.` : 'At risk: no test of the release has a result yet.';
  return 'Ready to ship: no rule blocks it or puts it at risk.';
}

const REASON: Record<string, string> = {
  no_coverage: 'no test case covers it',
  last_failed: 'its case last failed',
  never_ran: 'never ran in this release',
  not_passed: '',
  open_bug: '',
  flaky: 'flaky',
  quarantined: 'quarantined',
  new_failure: 'new failure',
  suspect: 'changed since its case last passed',
};

const EFFECT: Record<string, string> = { blocks: 'blocks', risks: 'puts at risk', none: '' };
const SHOWN = 4;

export async function releasesFragment(data: ConsoleData, principal: Principal): Promise<Html> {
  const releases = await data.releases(principal, 200);
  const rows = releases.items.map(
    (
      r,
    ) => html`<tr data-release="${r.id}"><td><a href="${BASE}/releases/${r.id}">${String(r.name ?? r.id)}</a>${r.title ? html` <span class="muted">${String(r.title)}</span>` : ''}<div class="muted mono">${r.id}</div></td>
      <td>${statusBadge(String(r.status ?? 'planned'))}</td><td>${r.releaseDate ? String(r.releaseDate) : html`<span class="muted">—</span>`}</td>
      <td><a href="${BASE}/releases/${r.id}">Readiness</a></td></tr>`,
  );
  return rows.length
    ? html`<table><thead><tr><th scope="col">Release</th><th scope="col">Status</th><th scope="col">Ships</th><th scope="col">Readiness</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="card muted">No releases yet (POST /api/v1/releases).</p>`;
}

function recordLink(r: ReadinessView['rules'][number]['records'][number]): Html {
  const label = r.title ?? r.id;
  const target =
    r.kind === 'test_case' ? html`<a href="${BASE}/cases/${r.id}">${label}</a>` : html`<span>${label}</span>`;
  const reason = REASON[r.reason] ?? r.reason.replace(/_/g, ' ');
  const extra = [r.severity, r.reason === 'last_failed' ? '' : r.status, reason].filter(Boolean).join(', ');
  const via =
    r.testCaseId && r.kind !== 'test_case'
      ? html` · case <a href="${BASE}/cases/${r.testCaseId}" class="mono">${r.testCaseId}</a>`
      : '';
  return html`<li>${target}${extra ? html` <span class="muted">(${extra})</span>` : ''}${via}</li>`;
}

export async function readinessFragment(data: ConsoleData, principal: Principal, releaseId: string): Promise<Html> {
  const r = await data.readiness(principal, releaseId);
  const t = r.thresholds;
  const rows = r.rules.map((rule) => {
    const more = rule.records.length - SHOWN;
    return html`<tr data-rule="${rule.id}">
      <td>${statusBadge(rule.status)}</td>
      <th scope="row">${rule.title}${rule.effect !== 'none' ? html`<div class="effect effect-${rule.effect}">${EFFECT[rule.effect]}</div>` : ''}</th>
      <td>${rule.summary}</td>
      <td>${
        rule.records.length
          ? html`<ul class="records">${rule.records.slice(0, SHOWN).map(recordLink)}${more > 0 ? html`<li class="muted">and ${more} more</li>` : ''}</ul>`
          : html`<span class="muted">—</span>`
      }</td>
    </tr>`;
  });
  return html`<section class="card verdict-card verdict-${r.verdict}" aria-labelledby="verdict-h">
      <div class="verdict-line"><h2 id="verdict-h">Release ${r.releaseName}</h2>${statusBadge(r.verdict)}</div>
      <p>${verdictText(r)}${r.previousVerdict && r.previousVerdict !== r.verdict ? html` It was <strong>${r.previousVerdict.replace('_', ' ')}</strong> at ${time(r.previousComputedAt)}.` : ''}</p>
      <dl class="facts">
        <div><dt>Computed</dt><dd>${time(r.computedAt)}</dd></div>
        <div><dt>Requirements</dt><dd>${r.scope.requirementIds.length}</dd></div>
        <div><dt>Plans · test runs</dt><dd>${r.scope.testPlanIds.length} · ${r.scope.testRunIds.length}</dd></div>
        <div><dt>Test cases</dt><dd>${r.scope.testCases}</dd></div>
        <div><dt>Pass rate wanted</dt><dd>${pct(t.minPassRate)} (blocked under ${pct(t.blockingPassRate)})</dd></div>
        <div><dt>Blocking bugs</dt><dd>${t.blockingBugSeverities.join(', ') || 'none'}</dd></div>
      </dl>
    </section>
    <table class="rules"><caption class="visually-hidden">Readiness rules</caption>
      <thead><tr><th scope="col">Status</th><th scope="col">Rule</th><th scope="col">What was found</th><th scope="col">Records behind it</th></tr></thead>
      <tbody>${rows}</tbody></table>
    <p class="muted">Thresholds: GET/PATCH /api/v1/platform/settings. The same answer: GET /api/v1/releases/${r.releaseId}/readiness.</p>`;
}

const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
