// The browser extension's page: how to install it (the zip the service serves, built by
// `npm run build:extension`), the settings to give it, and which sessions of the project are
// extensions. docs/extension.md says the rest.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import type { Principal } from '../../auth/principal.js';
import type { ConsoleData } from '../data.js';
import { type Html, html, statusBadge, time } from '../html.js';
import { BASE } from '../layout.js';
import { capabilities } from './sessions.js';

/**
 * Where the built zip is: dist/extension.zip at the root of the checkout, seen from this file in the
 * sources (src/console/pages/) or in the build (dist/src/console/pages/).
 */
const ZIP_PLACES = ['../../../dist/extension.zip', '../../../extension.zip'].map((rel) =>
  fileURLToPath(new URL(rel, import.meta.url)),
);

/** The zip to serve: the configured one (EXTENSION_ZIP) if it exists, else the checkout's; none when not built. */
export function extensionZip(configured?: string): string | undefined {
  return (configured ? [configured] : ZIP_PLACES).find((file) => fs.existsSync(file));
}

/** GET /console/extension.zip: the built extension, or a clear 404 when this service has none. */
export function serveExtensionZip(ctx: Koa.Context, zip: string | undefined): void {
  ctx.set('Cache-Control', 'no-cache');
  if (!zip) {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body =
      'The browser extension is not built on this service. Build it where the service runs (npm run build:extension, or npm run build) and reload.\n';
    return;
  }
  ctx.type = 'application/zip';
  ctx.attachment('otp-extension.zip');
  ctx.body = fs.createReadStream(zip);
}

function installSteps(origin: string, built: boolean): Html {
  const download = built
    ? html`<a class="button" href="${BASE}/extension.zip" download>Download the extension (zip)</a>`
    : html`<p class="error" role="alert">The extension is not built on this service: run <code>npm run build:extension</code> (or <code>npm run build</code>) where it runs, then reload this page.</p>`;
  return html`<section class="card" aria-labelledby="install">
    <h2 id="install">Install it</h2>
    ${download}
    <ol>
      <li>Unzip it into a folder of its own.</li>
      <li>Open <code>chrome://extensions</code> in Chrome, Edge or Chromium 125 or later, turn on <strong>Developer mode</strong>, choose <strong>Load unpacked</strong> and pick that folder.</li>
      <li>In the extension's options, set the service address to <code>${origin}</code>, then <strong>Sign in</strong> (you consent with a key of this project once) or paste an API key of scope <code>write</code>.</li>
      <li>It connects and appears below. Start a run on it from a test case, or record: the toolbar button opens the recorder's side panel on the current tab.</li>
    </ol>
    <p class="muted">A company can install it and preset <code>serviceUrl</code> by policy (ExtensionInstallForcelist and the extension's managed storage): see docs/extension.md.</p>
  </section>`;
}

export async function extensionFragment(
  data: ConsoleData,
  principal: Principal,
  origin: string,
  built: boolean,
): Promise<Html> {
  const page = await data.sessions(principal.projectId, { status: 'all', limit: 200 });
  const rows = page.items
    .filter((s) => s.executor === 'extension')
    .map(
      (s) => html`<tr data-session="${s.id}">
      <td><a href="${BASE}/sessions/${s.id}"><strong>${s.name ?? '(no name)'}</strong></a><div class="muted mono">${s.id}</div></td>
      <td>${s.version ?? ''}</td>
      <td>${statusBadge(s.status)}</td>
      <td>${capabilities(s.capabilities as Record<string, unknown>)}</td>
      <td class="in-flight">${s.activeRuns} of ${s.maxParallel}</td>
      <td>${time(s.connectedAt)}</td>
    </tr>`,
    );
  const sessions = rows.length
    ? html`<table><caption class="muted">${rows.length} extension session${rows.length === 1 ? '' : 's'} of this project</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Capabilities</th>
        <th scope="col">Runs in flight</th><th scope="col">Connected since</th></tr></thead>
        <tbody>${rows}</tbody></table>`
    : html`<p class="card muted">No extension has connected to this project yet.</p>`;
  return html`<p>Run and record tests in your own Chromium: behind your sign-ins, your VPN and your cookies. The extension is an executor like <code>otp-runner</code>; each run opens in a window of its own.</p>
    ${installSteps(origin, built)}
    <h2>Extension sessions</h2>
    ${sessions}`;
}
