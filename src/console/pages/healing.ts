// The healing review: each proposed locator fix with its evidence (the rule that found it, the runs,
// what every candidate matched, the newest screenshot), accepted or rejected by a person.

import type { Principal } from '../../auth/principal.js';
import { locatorPhrase } from '../../otp/protocol/sentences.js';
import type { ConsoleData, HealingView } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

const RULES: Record<string, string> = {
  passed_through_other: 'the step passed only through this candidate, not its first',
  first_matched_nothing: 'its first candidate matched nothing while this one matched exactly one element',
};
const STATUSES = ['proposed', 'accepted', 'rejected'] as const;

async function card(data: ConsoleData, principal: Principal, p: HealingView, origin: string): Promise<Html> {
  const title = await data.artifact(principal, 'test_case', p.testCaseId).then(
    (c) => c.title ?? p.testCaseId,
    () => p.testCaseId,
  );
  const shot = p.evidence.screenshotAssetId
    ? await data.signedUrl(principal, p.evidence.screenshotAssetId, origin).catch(() => null)
    : null;
  const counts = p.evidence.counts.map(
    (c) =>
      html`<tr><td>${locatorPhrase(c.locator as never)}</td><td>${c.count ?? '?'}</td><td>${c.visible === undefined ? '—' : c.visible ? 'yes' : 'no'}</td><td>${c.enabled === undefined ? '—' : c.enabled ? 'yes' : 'no'}</td></tr>`,
  );
  const decided =
    p.status === 'accepted'
      ? html`<p>${statusBadge('accepted')} version ${p.newVersion} by <span class="mono">${p.decidedBy}</span> at ${time(p.decidedAt)}</p>`
      : p.status === 'rejected'
        ? html`<p>${statusBadge('rejected')} ${p.reason ?? ''} (${time(p.decidedAt)}); not proposed again for this evidence</p>`
        : html`<div class="run-actions">
          <button type="button" hx-post="${BASE}/f/healing/${p.id}/accept" hx-target="closest article" hx-swap="outerHTML">Accept: make a new version</button>
          <form hx-post="${BASE}/f/healing/${p.id}/reject" hx-target="closest article" hx-swap="outerHTML" class="inline">
            <div><label for="reason-${p.id}">Why not</label><input id="reason-${p.id}" name="reason" type="text" maxlength="2000"></div>
            <button type="submit" class="secondary">Reject</button></form></div>`;
  return html`<article class="card proposal" id="${p.id}" aria-labelledby="${p.id}-h">
    <h3 id="${p.id}-h"><a href="${BASE}/cases/${p.testCaseId}/history">${title}</a>, step ${p.stepPosition + 1}${p.evidence.label ? html` (${p.evidence.label})` : ''}</h3>
    <p class="fix"><span class="old">${locatorPhrase(p.oldLocator as never)}</span> → <strong class="new">${locatorPhrase(p.newLocator as never)}</strong></p>
    <p>Why: ${RULES[p.evidence.rule] ?? p.evidence.rule}; seen in ${p.evidence.occurrences} step result${p.evidence.occurrences === 1 ? '' : 's'}, last ${time(p.evidence.lastSeen)}, runs
      ${p.evidence.runs.map((r, i) => html`${i ? ', ' : ''}<a class="mono" href="${BASE}/runs/${r.runId}">${r.runId}</a>`)}.</p>
    <table class="counts"><caption>What each candidate matched (newest run)</caption><thead><tr><th scope="col">Candidate</th><th scope="col">Elements</th><th scope="col">Visible</th><th scope="col">Enabled</th></tr></thead><tbody>${counts}</tbody></table>
    ${shot ? html`<div class="shot"><img src="${shot}" alt="Screenshot of the step in ${p.evidence.runs[0]?.runId}" loading="lazy"></div>` : ''}
    ${decided}
  </article>`;
}

export async function healingFragment(
  data: ConsoleData,
  principal: Principal,
  status: string,
  origin: string,
): Promise<Html> {
  const chosen = (STATUSES as readonly string[]).includes(status) ? (status as HealingView['status']) : 'proposed';
  const proposals = await data.healingProposals(principal, chosen);
  const tabs = html`<ul class="caps" aria-label="Which proposals">${STATUSES.map((s) => html`<li><a class="cap" href="${BASE}/healing?status=${s}"${s === chosen ? html` aria-current="page"` : ''}>${s}</a></li>`)}</ul>`;
  const cards = await Promise.all(proposals.map((p) => card(data, principal, p, origin)));
  return html`${tabs}${cards.length ? cards : html`<p class="card muted">No ${chosen} proposal. Proposals come from runs whose steps passed through another locator candidate than their first.</p>`}`;
}

export async function decideFragment(
  data: ConsoleData,
  principal: Principal,
  id: string,
  decision: 'accept' | 'reject',
  form: URLSearchParams,
  origin: string,
): Promise<Html> {
  const reason = form.get('reason')?.trim();
  const decided = await data.decideHealing(principal, id, decision, reason || undefined);
  return card(data, principal, decided, origin);
}
