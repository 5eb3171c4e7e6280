// Executor sessions: who is connected, what they can do, how busy they are, how alive.

import type { Principal } from '../../auth/principal.js';
import type { ConsoleData, SessionView } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';

const STATUSES = ['open', 'closed', 'all'] as const;
type SessionStatus = (typeof STATUSES)[number];

export function sessionStatusOf(value: string | undefined): SessionStatus {
  return (STATUSES as readonly string[]).includes(value ?? '') ? (value as SessionStatus) : 'open';
}

export function capabilities(caps: Record<string, unknown> | null | undefined): Html {
  const entries = Object.entries(caps ?? {});
  if (!entries.length) return html`<span class="muted">none declared</span>`;
  return html`<span class="caps">${entries.map(([name, value]) =>
    typeof value === 'boolean'
      ? html`<span class="cap${value ? '' : ' off'}" title="${name}: ${value ? 'yes' : 'no'}">${name}</span>`
      : html`<span class="cap">${name}: ${String(value)}</span>`,
  )}</span>`;
}

export async function sessionsFragment(
  data: ConsoleData,
  principal: Principal,
  query: { status?: string },
): Promise<Html> {
  const status = sessionStatusOf(query.status);
  const page = await data.sessions(principal.projectId, { status, limit: 200 });
  const rows = page.items.map((s: SessionView) => {
    const local = data.liveness(principal.projectId, s.id);
    const lastPong =
      s.status !== 'open'
        ? html`<span class="muted">—</span>`
        : local
          ? local.lastPongAt
            ? time(local.lastPongAt)
            : html`<span class="muted">no ping answered yet</span>`
          : html`<span class="muted" title="Another service process holds this session; only it knows">held elsewhere</span>`;
    return html`<tr data-session="${s.id}">
      <td><a href="${BASE}/sessions/${s.id}"><strong>${s.name ?? '(no name)'}</strong></a><div class="muted mono">${s.id}</div></td>
      <td>${s.executor}${s.version ? html` <span class="muted">${s.version}</span>` : ''}</td>
      <td>${statusBadge(s.status)}${s.closeReason ? html`<div class="muted">${s.closeCode} ${s.closeReason}</div>` : ''}</td>
      <td>${capabilities(s.capabilities as Record<string, unknown>)}</td>
      <td class="in-flight">${s.activeRuns} of ${s.maxParallel}</td>
      <td>${time(s.connectedAt)}</td>
      <td>${lastPong}</td>
    </tr>`;
  });
  return html`<form class="inline" method="get" action="${BASE}/sessions">
      <div><label for="session-status">Show</label>
        <select id="session-status" name="status">${STATUSES.map((s) => html`<option value="${s}"${s === status ? ' selected' : ''}>${s === 'all' ? 'all sessions' : `${s} sessions`}</option>`)}</select></div>
      <button type="submit" class="secondary">Apply</button>
    </form>
    ${
      rows.length
        ? html`<table><caption class="muted">${rows.length} session${rows.length === 1 ? '' : 's'}, live</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Executor</th><th scope="col">Status</th><th scope="col">Capabilities</th>
        <th scope="col">Runs in flight</th><th scope="col">Connected since</th><th scope="col">Last pong</th></tr></thead>
        <tbody>${rows}</tbody></table>`
        : html`<p class="card muted">No ${status === 'all' ? '' : status} executor sessions. An executor connects at <code>ws://…/otp</code> with a key of this project.</p>`
    }`;
}
