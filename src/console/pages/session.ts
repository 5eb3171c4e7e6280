// One executor session, live: what it is and can do, where it is now (ready and idle or busy,
// detached and waiting to be resumed, closed and why), its machine with the path it took, its pings
// and pongs, and its runs. The machine and the keepalive are known only to the process holding the
// session (kept in memory: otp/engine/session-trace.ts); the rest is read from PostgreSQL.

import type { Principal } from '../../auth/principal.js';
import type { RunSummary } from '../../otp/store/run-views.js';
import type { ConsoleData, SessionView } from '../data.js';
import { traceMarks } from '../diagram.js';
import { clock, type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';
import { VIEWER_HINT, viewer } from '../viewer.js';
import { scrubber, transitionRow } from './run-inspector.js';
import { capabilities } from './sessions.js';

type Liveness = NonNullable<ReturnType<ConsoleData['liveness']>>;

/** ready (idle or busy), detached, closed, …: what the session is doing now, in a word and a sentence. */
function phase(s: SessionView, local: Liveness | undefined, busy: number): { word: string; text: string } {
  if (s.status === 'closed' || local?.state === 'closed') {
    return {
      word: 'closed',
      text: `Closed${s.closeCode ? ` with ${s.closeCode}` : ''}${s.closeReason ? `: ${s.closeReason}` : ''}.`,
    };
  }
  if (!local)
    return {
      word: busy ? 'busy' : 'open',
      text: 'Held by another service process: its machine and keepalive are known there.',
    };
  if (local.state === 'detached')
    return { word: 'detached', text: 'Its socket dropped: it waits to be resumed, its runs paused.' };
  if (local.state.startsWith('ready')) {
    const resumed = local.transitions.some((t) => t.event === 'RESUME' || t.event === 'TRANSFERRED_IN');
    return {
      word: busy ? 'busy' : 'ready',
      text: `${resumed ? 'Resumed, ' : ''}${busy ? `busy: ${busy} of ${s.maxParallel} runs in flight` : 'ready, no run in flight'}.`,
    };
  }
  return { word: local.state, text: 'Opening: hello and its registration.' };
}

function runsTable(runs: RunSummary[]): Html {
  if (!runs.length) return html`<p class="muted">No run on this session yet.</p>`;
  return html`<table id="session-runs"><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Steps</th><th scope="col">Started</th><th scope="col">Finished</th></tr></thead>
    <tbody>${runs.map(
      (
        r,
      ) => html`<tr data-run="${r.id}"><td><a class="mono" href="${BASE}/runs/${r.id}">${r.id}</a></td><td>${statusBadge(r.status)}</td>
      <td>${r.counts.passed} passed · ${r.counts.failed} failed · ${r.counts.skipped} skipped <span class="muted">of ${r.counts.total}</span></td>
      <td>${time(r.startedAt)}</td><td>${time(r.finishedAt)}</td></tr>`,
    )}</tbody></table>`;
}

function machine(local: Liveness | undefined, s: SessionView): Html {
  // Away from its holder the stored status is all there is: open (ready) or closed.
  const transitions = local?.transitions ?? [
    {
      at: s.connectedAt ?? '',
      event: s.status === 'closed' ? 'closed' : 'open',
      from: null,
      to: s.status === 'closed' ? 'closed' : 'ready',
    },
  ];
  const dropped = local?.dropped ?? 0;
  let previousAt: string | undefined;
  const rows = transitions.map((t, i) => {
    const row = transitionRow(dropped + i, t, previousAt);
    previousAt = t.at;
    return row;
  });
  const n = transitions.length;
  return html`<section class="inspector card session-inspector" data-inspector data-live="true" aria-labelledby="machine-h">
    <div class="inspector-head"><h2 id="machine-h">Session machine</h2>${local ? scrubber(n, true) : ''}
      <p class="position" data-position aria-live="polite"></p></div>
    <div class="inspector-body">
      ${viewer('session', { id: 'session-diagram', label: 'The session machine', marks: traceMarks(transitions) })}
      <div class="timeline" tabindex="0" aria-label="The session machine's transitions">
        ${local ? '' : html`<p class="muted">Its transitions are known only to the process that holds it.</p>`}
        <table><caption class="muted">${local ? `${n} transitions${dropped ? `, ${dropped} older ones dropped` : ''}; keepalive pings and pongs are counted, not listed` : 'As stored'}</caption>
          <thead><tr><th scope="col">#</th><th scope="col">Time (UTC)</th><th scope="col">Since</th><th scope="col">Transition</th></tr></thead>
          <tbody>${rows}</tbody></table>
      </div>
    </div>
    <p class="muted legend"><span class="key current"></span> state now (or at the chosen transition) <span class="key just"></span> the transition just taken <span class="key visited"></span> states and transitions on the way there. ${VIEWER_HINT}</p>
  </section>`;
}

export async function sessionFragment(data: ConsoleData, principal: Principal, sessionId: string): Promise<Html> {
  const [s, runs] = await Promise.all([
    data.session(principal.projectId, sessionId),
    data.runs.latest(principal, { sessionId, limit: 50 }),
  ]);
  const local = data.liveness(principal.projectId, sessionId);
  const busy = local ? local.runsInFlight : s.activeRuns;
  const now = phase(s, local, busy);
  const keepalive = local
    ? html`${local.pings} ping${local.pings === 1 ? '' : 's'} sent, ${local.pongs} pong${local.pongs === 1 ? '' : 's'} awaited came back · last ping ${clock(local.lastPingAt?.toISOString())} · last pong ${clock(local.lastPongAt?.toISOString())}`
    : html`<span class="muted">known to the process that holds it</span>`;
  return html`<section class="card" aria-labelledby="session-h">
    <h2 id="session-h">${s.name ?? '(no name)'} <span class="phase phase-${now.word}" id="session-phase" data-phase="${now.word}">${now.word}</span></h2>
    <p id="session-now">${now.text}</p>
    <dl class="facts">
      <div><dt>Session</dt><dd class="mono">${s.id}</dd></div>
      <div><dt>Executor</dt><dd>${s.executor}${s.version ? html` <span class="muted">${s.version}</span>` : ''}</dd></div>
      <div><dt>Status</dt><dd>${statusBadge(s.status)}</dd></div>
      <div><dt>Runs in flight</dt><dd id="session-busy">${busy} of ${s.maxParallel}</dd></div>
      <div><dt>Connected</dt><dd>${time(s.connectedAt)}</dd></div>
      <div><dt>Closed</dt><dd>${time(s.closedAt)}</dd></div>
      ${s.closeReason || s.closeCode ? html`<div><dt>Why it closed</dt><dd id="session-close">${s.closeCode ?? ''} ${s.closeReason ?? ''}</dd></div>` : ''}
      <div><dt>Keepalive</dt><dd id="session-keepalive">${keepalive}</dd></div>
      <div><dt>Capabilities</dt><dd>${capabilities(s.capabilities as Record<string, unknown>)}</dd></div>
    </dl>
  </section>
  ${machine(local, s)}
  <h2>Runs on this session <span class="muted">(the newest 50)</span></h2>
  ${runsTable(runs)}`;
}
