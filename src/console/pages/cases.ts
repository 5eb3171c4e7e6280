// Test cases and plans, each step written as a sentence; a run starts from any of them.

import type { StepAction } from '../../../machines/types.js';
import { referencedVars } from '../../../machines/vars.js';
import type { Principal } from '../../auth/principal.js';
import { stepSentence } from '../../otp/protocol/sentences.js';
import type { ArtifactRecord, ConsoleData } from '../data.js';
import { type Html, html } from '../html.js';
import { BASE } from '../layout.js';

interface CaseStep {
  otp: { action: string };
  label?: string;
  continueOnFail?: boolean;
  timeoutMs?: number;
}

const runButton = (id: string, what: string) =>
  html`<form hx-post="${BASE}/f/runs" hx-target="next .run-result" hx-swap="innerHTML" class="inline-button">
    <input type="hidden" name="what" value="${id}"><button type="submit" aria-label="Run ${what}">Run</button></form><span class="run-result" role="status"></span>`;

/** From the list, a case whose steps use {{variables}} is run from its page, which asks for their values. */
const runOnItsPage = (id: string, what: string) =>
  html`<a class="button" href="${BASE}/cases/${id}" aria-label="Run ${what} (give its variables first)">Run…</a>`;

/** The {{variables}} a case's steps use, each once. */
const caseVarNames = (steps: CaseStep[]) => [...new Set(steps.flatMap((s) => referencedVars(s.otp as StepAction)))];

/**
 * A case or plan whose steps use {{variables}}: a field for each, then Run (secret_ ones are not
 * shown as typed). Field ids carry the item's id: the plans list holds several such forms.
 */
const runWithVars = (id: string, what: string, names: string[]) =>
  html`<form hx-post="${BASE}/f/runs" hx-target="next .run-result" hx-swap="innerHTML" aria-label="Run ${what}">
    <input type="hidden" name="what" value="${id}">
    <fieldset class="vars"><legend>Values of the steps' variables</legend>
      ${names.map(
        (name) => html`<div><label for="var-${id}-${name}">${name}</label>
        <input id="var-${id}-${name}" name="var.${name}" type="${name.startsWith('secret_') ? 'password' : 'text'}" autocomplete="off" required></div>`,
      )}
    </fieldset>
    <button type="submit">Run</button></form><span class="run-result" role="status"></span>`;

/** Every case a plan names, by id: those listed already, the others read (a case deleted since is left out). */
async function planCases(
  data: ConsoleData,
  principal: Principal,
  listed: Map<string, CaseStep[]>,
  plans: ArtifactRecord[],
) {
  const missing = [...new Set(plans.flatMap((p) => (p.testCaseIds as string[] | undefined) ?? []))].filter(
    (id) => !listed.has(id),
  );
  await Promise.all(
    missing.map(async (id) => {
      const c = await data.artifact(principal, 'test_case', id).catch(() => undefined);
      if (c) listed.set(id, (c.steps as CaseStep[] | undefined) ?? []);
    }),
  );
  return listed;
}

export async function casesFragment(data: ConsoleData, principal: Principal): Promise<Html> {
  const [cases, plans] = await Promise.all([
    data.artifacts(principal, 'test_case', 200),
    data.artifacts(principal, 'test_plan', 200),
  ]);
  const stepsOf = await planCases(
    data,
    principal,
    new Map(cases.items.map((c) => [c.id, (c.steps as CaseStep[] | undefined) ?? []])),
    plans.items,
  );
  const caseRows = cases.items.map((c) => {
    const steps = (c.steps as CaseStep[] | undefined) ?? [];
    return html`<tr data-case="${c.id}"><td><a href="${BASE}/cases/${c.id}">${c.title ?? c.id}</a><div class="muted mono">${c.id}</div></td>
      <td>${steps.length}</td><td>${steps[0] ? stepSentence(steps[0].otp) : ''}${steps.length > 1 ? ' …' : ''}</td>
      <td>${String(c.status ?? '')}</td><td>${caseVarNames(steps).length ? runOnItsPage(c.id, c.title ?? c.id) : runButton(c.id, c.title ?? c.id)}</td></tr>`;
  });
  // A plan has no page of its own: one whose cases use {{variables}} asks for their values in its row.
  const planRows = plans.items.map((p) => {
    const ids = (p.testCaseIds as string[] | undefined) ?? [];
    const names = caseVarNames(ids.flatMap((id) => stepsOf.get(id) ?? []));
    const what = `plan ${p.title ?? p.id}`;
    return html`<tr data-plan="${p.id}"><td>${p.title ?? p.id}<div class="muted mono">${p.id}</div></td><td>${ids.length} test case${ids.length === 1 ? '' : 's'}</td>
      <td>${String(p.status ?? '')}</td><td>${names.length ? runWithVars(p.id, what, names) : runButton(p.id, what)}</td></tr>`;
  });
  return html`<h2>Test cases</h2>
    ${
      caseRows.length
        ? html`<table><thead><tr><th scope="col">Test case</th><th scope="col">Steps</th><th scope="col">First step</th><th scope="col">Status</th><th scope="col">Run</th></tr></thead><tbody>${caseRows}</tbody></table>`
        : html`<p class="card muted">No test cases yet (POST /api/v1/tests/cases).</p>`
    }
    <h2>Plans</h2>
    ${
      planRows.length
        ? html`<table><thead><tr><th scope="col">Plan</th><th scope="col">Test cases</th><th scope="col">Status</th><th scope="col">Run</th></tr></thead><tbody>${planRows}</tbody></table>`
        : html`<p class="card muted">No plans yet (POST /api/v1/tests/plans).</p>`
    }`;
}

export async function caseFragment(data: ConsoleData, principal: Principal, id: string): Promise<Html> {
  const c = await data.artifact(principal, 'test_case', id);
  const steps = (c.steps as CaseStep[] | undefined) ?? [];
  const varNames = caseVarNames(steps);
  return html`<section class="card" aria-labelledby="case-h">
      <h2 id="case-h">${c.title ?? c.id}</h2>
      <p class="muted mono">${c.id}</p>
      ${c.description ? html`<p>${String(c.description)}</p>` : ''}
      ${c.preconditions ? html`<p><strong>Before:</strong> ${String(c.preconditions)}</p>` : ''}
      ${varNames.length ? runWithVars(c.id, c.title ?? c.id, varNames) : runButton(c.id, c.title ?? c.id)}
      <p><a href="${BASE}/runs?testCaseId=${c.id}">Runs of this test case</a> · <a href="${BASE}/cases/${c.id}/history">Its history, flakiness and healing</a></p>
    </section>
    <h2>Steps</h2>
    ${
      steps.length
        ? html`<ol class="sentences">${steps.map((s) => html`<li>${s.label ? html`<strong>${s.label}:</strong> ` : ''}${capitalise(stepSentence(s.otp))}.${s.continueOnFail ? html` <span class="muted">(the case goes on if it fails)</span>` : ''}${s.timeoutMs ? html` <span class="muted">(${s.timeoutMs} ms allowed)</span>` : ''}</li>`)}</ol>`
        : html`<p class="muted">No steps.</p>`
    }`;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
