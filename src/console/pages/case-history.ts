// A test case's history: a strip of its last runs (oldest to newest), its flakiness and the reasons,
// its quarantine (set or ended here), the requirements and bugs linked to it, and its healing
// proposals with what became of them (the version an accepted one made, who and when).

import type { Principal } from '../../auth/principal.js';
import { locatorPhrase, stepSentence } from '../../otp/protocol/sentences.js';
import type { CaseHistoryView, ConsoleData } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

type Flakiness = NonNullable<CaseHistoryView['flakiness']>;
const OUTCOME_WORDS: Record<string, string> = { pass: 'passed', fail: 'failed', flaky: 'passed on retry' };

function strip(runs: Flakiness['lastRuns']): Html {
  const oldestFirst = [...runs].reverse();
  return html`<ol class="run-strip" aria-label="Last runs, oldest first">${oldestFirst.map(
    (r) =>
      html`<li><a class="o-${r.outcome}" href="${BASE}/runs/${r.runId}" title="${r.runId} · ${OUTCOME_WORDS[r.outcome] ?? r.outcome} · version ${r.version ?? '?'} · ${r.createdAt}"><span class="visually-hidden">${r.runId} ${OUTCOME_WORDS[r.outcome] ?? r.outcome}</span></a></li>`,
  )}</ol>`;
}

function quarantineForm(id: string, quarantine: CaseHistoryView['quarantine']): Html {
  const action = quarantine ? 'release' : 'quarantine';
  return html`<form hx-post="${BASE}/f/cases/${id}/history/${action}" hx-target="#content" hx-swap="innerHTML" class="inline-button">
    <button type="submit" class="${quarantine ? 'secondary' : ''}">${quarantine ? 'End the quarantine' : 'Quarantine'}</button></form>`;
}

function proposalLine(p: CaseHistoryView['proposals'][number]): Html {
  const what = html`step ${p.stepPosition + 1}: ${locatorPhrase(p.oldLocator as never)} → ${locatorPhrase(p.newLocator as never)}`;
  if (p.status === 'accepted')
    return html`<li>${statusBadge('accepted')} ${what}: version ${p.newVersion} by <span class="mono">${p.decidedBy}</span> at ${time(p.decidedAt)}, from run <a class="mono" href="${BASE}/runs/${p.evidence.runs[0]?.runId}">${p.evidence.runs[0]?.runId}</a></li>`;
  if (p.status === 'rejected')
    return html`<li>${statusBadge('rejected')} ${what}${p.reason ? html`: “${p.reason}”` : ''} (${time(p.decidedAt)})</li>`;
  return html`<li>${statusBadge('proposed')} ${what} — <a href="${BASE}/healing">review</a></li>`;
}

export async function caseHistoryFragment(
  data: ConsoleData,
  principal: Principal,
  id: string,
  notice?: Html,
): Promise<Html> {
  const [c, history, links] = await Promise.all([
    data.artifact(principal, 'test_case', id),
    data.caseHistory(principal, id),
    data.caseLinks(principal, id),
  ]);
  const steps = (c.steps as Array<{ otp: { action: string }; label?: string }> | undefined) ?? [];
  const f = history.flakiness;
  const requirements = links.filter((l) => l.kind === 'requirement');
  const bugs = links.filter((l) => l.kind === 'bug');
  const linkList = (items: typeof links, none: string) =>
    items.length
      ? html`<ul>${items.map((l) => html`<li><span class="mono">${l.id}</span> ${l.title ?? ''} <span class="muted">(${l.reads.replace(/_/g, ' ')})</span></li>`)}</ul>`
      : html`<p class="muted">${none}</p>`;
  return html`${notice ?? ''}<section class="card" aria-labelledby="hist-h">
      <h2 id="hist-h">${c.title ?? c.id} <span class="muted">· version ${String(c.version ?? '')}</span></h2>
      <p><a href="${BASE}/cases/${c.id}">Steps and Run</a> · <a href="${BASE}/runs?testCaseId=${c.id}">All its runs</a></p>
      <p id="quarantine">${
        history.quarantine
          ? html`<span class="badge s-quarantined">quarantined</span> until ${time(history.quarantine.expiresAt)}${history.quarantine.reason ? html` — ${history.quarantine.reason}` : ''}: it runs and reports, its failures do not fail runs.`
          : html`<span class="muted">Not quarantined.</span>`
      } ${quarantineForm(c.id, history.quarantine)}</p>
    </section>
    <h2>Last runs</h2>
    ${f ? html`${strip(f.lastRuns)}<p class="muted legend">Oldest on the left: green passed, red failed, orange passed only on retry; each opens its run.</p>` : html`<p class="muted">No finished run of this test case yet.</p>`}
    <h2>Flakiness</h2>
    ${
      f
        ? html`<p id="flakiness">${statusBadge(f.status)} score ${f.score.toFixed(2)} · ${f.runs} runs · ${f.failures} failed · ${f.retryPasses} passed on retry · ${f.flips} flips</p>
        <ul>${f.reasons.map((r) => html`<li>${r}</li>`)}</ul>
        ${f.steps.length ? html`<p>Steps that failed:</p><ol class="sentences">${f.steps.slice(0, 5).map((s) => html`<li value="${s.position + 1}">${steps[s.position] ? stepSentence(steps[s.position]!.otp as never) : `step ${s.position + 1}`} — ${s.failures}×</li>`)}</ol>` : ''}`
        : html`<p class="muted">Nothing to judge yet.</p>`
    }
    <div class="columns">
      <section><h2>Requirements</h2>${linkList(requirements, 'It covers no requirement.')}</section>
      <section><h2>Bugs</h2>${linkList(bugs, 'No bug is linked to it.')}</section>
    </div>
    <h2>Locator healing</h2>
    ${history.proposals.length ? html`<ul>${history.proposals.map(proposalLine)}</ul>` : html`<p class="muted">No proposal.</p>`}`;
}

export async function setQuarantine(data: ConsoleData, principal: Principal, id: string, on: boolean): Promise<Html> {
  await data.quarantine(principal, id, on);
  return caseHistoryFragment(
    data,
    principal,
    id,
    html`<p class="notice" role="status">${on ? 'Quarantined.' : 'The quarantine ended.'}</p>`,
  );
}
