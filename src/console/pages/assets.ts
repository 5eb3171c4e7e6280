// Buckets and the assets in one of them, with links that need no key (signed, 15 minutes).

import { stepName } from '../../../machines/step-names.js';
import type { Principal } from '../../auth/principal.js';
import type { ConsoleData } from '../data.js';
import { type Html, html } from '../html.js';
import { BASE } from '../layout.js';

const evidenceOf = (a: { [field: string]: unknown }) => a.evidence as { runId: string; stepIndex: number } | undefined;

const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

export async function assetsFragment(
  data: ConsoleData,
  principal: Principal,
  bucket: string,
  origin: string,
): Promise<Html> {
  const buckets = await data.buckets(principal, 200);
  const chosen = buckets.items.find((b) => b.id === bucket || b.name === bucket) ?? buckets.items[0];
  const nav = html`<nav aria-label="Buckets"><ul class="caps">${buckets.items.map(
    (b) =>
      html`<li><a class="cap" href="${BASE}/assets?bucket=${b.id}"${b === chosen ? html` aria-current="true"` : ''}>${b.name}</a></li>`,
  )}</ul></nav>`;
  if (!chosen) return html`<p class="card muted">No buckets.</p>`;
  const assets = await data.assets(principal, chosen.id, 200);
  const rows = await Promise.all(
    assets.items.map(async (a) => {
      const url = await data.signedUrl(principal, a.id, origin).catch(() => null);
      return html`<tr data-asset="${a.id}"><td>${url ? html`<a href="${url}" target="_blank" rel="noopener">${a.name}</a>` : a.name}<div class="muted mono">${a.id}</div></td>
        <td>${a.contentType}</td><td>${size(a.size)}</td><td>${String(a.visibility ?? '')}</td>
        <td>${evidenceOf(a) ? html`<a href="${BASE}/runs/${evidenceOf(a)!.runId}" class="mono">${evidenceOf(a)!.runId}</a> ${stepName({ stepIndex: evidenceOf(a)!.stepIndex })}` : ''}</td></tr>`;
    }),
  );
  return html`${nav}
    <h2>Bucket ${chosen.name}</h2>
    ${
      rows.length
        ? html`<table><caption class="muted">${rows.length} asset${rows.length === 1 ? '' : 's'}; links are signed and work for 15 minutes</caption>
        <thead><tr><th scope="col">Asset</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Visibility</th><th scope="col">Run</th></tr></thead><tbody>${rows}</tbody></table>`
        : html`<p class="card muted">This bucket is empty.</p>`
    }`;
}
