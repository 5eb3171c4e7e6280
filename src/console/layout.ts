// The page shell: the same for every page. Its data comes after load, by htmx requests that carry the
// key from sessionStorage (static/console.js), so the shell itself holds nothing of any project.
import { type Html, html } from './html.js';

export const BASE = '/console';

const NAV: Array<[string, string]> = [
  ['runs', 'Runs'],
  ['sessions', 'Sessions'],
  ['failures', 'Failures'],
  ['cases', 'Test cases'],
  ['releases', 'Releases'],
  ['healing', 'Healing'],
  ['assets', 'Assets'],
  ['machines', 'Machines'],
  ['extension', 'Extension'],
];

function head(title: string): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorCSS":false,"history":false,"extensions":"sse"}'>
<title>${title} · OTP console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${BASE}/static/console.css">
<script src="${BASE}/static/console.js" defer></script>
<script type="module" src="${BASE}/static/inspect.js"></script>
<script src="${BASE}/static/htmx-sse.js" defer></script>`;
}

/**
 * A page: nav, the live stream (`live`: the SSE query, or none) and the main content, fetched from
 * `fragment` on load and again on each of `refreshOn` (events the stream raises on #live).
 */
export function page(opts: {
  title: string;
  nav: string;
  fragment: string;
  once?: string;
  live?: string;
  refreshOn?: string[];
  wide?: boolean;
}): string {
  const triggers = ['load', ...(opts.refreshOn ?? []).map((e) => `${e} from:#live`)].join(', ');
  return `<!doctype html>${html`<html lang="en">
<head>${head(opts.title)}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="${BASE}/runs">OTP console</a>
  <nav aria-label="Console">
    <ul>${NAV.map(([id, label]) => html`<li><a href="${BASE}/${id}"${id === opts.nav ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul>
  </nav>
  <span class="who" id="who"></span>
  <button type="button" class="link" id="sign-out">Sign out</button>
</header>
${opts.live !== undefined ? html`<div id="live" hx-sse:connect="${BASE}/f/live${opts.live}" aria-hidden="true"></div>` : ''}
<main id="main" tabindex="-1"${opts.wide ? html` class="wide"` : ''}>
  <h1>${opts.title}</h1>
  ${opts.once ? html`<div id="controls" hx-get="${opts.once}" hx-trigger="load"></div>` : ''}
  <div id="content" hx-get="${opts.fragment}" hx-trigger="${triggers}" hx-swap="innerMorph" aria-live="polite" aria-busy="false">
    <p class="muted">Loading…</p>
  </div>
</main>
</body>
</html>`}`;
}

export function signInPage(): string {
  return `<!doctype html>${html`<html lang="en">
<head>${head('Sign in')}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">OTP console</span></header>
<main id="main" tabindex="-1" class="narrow">
  <h1>Sign in</h1>
  <form id="sign-in" method="post" action="${BASE}/sign-in" class="card">
    <p>Paste an API key of your project (<code>svc_pk_…</code>). It stays in this browser tab only
      (session storage) and is sent as an <code>Authorization</code> header; closing the tab forgets it.</p>
    <label for="key">API key</label>
    <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required pattern="\\S+" aria-describedby="sign-in-error">
    <p id="sign-in-error" class="error" role="alert"></p>
    <button type="submit">Sign in</button>
    <p class="muted" id="oauth-hook" hidden>Or <a id="oauth-link" href="#">sign in with the service's OAuth</a>.</p>
  </form>
</main>
</body>
</html>`}`;
}
