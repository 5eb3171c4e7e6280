// The consent page of the authorization code flow. The service has no user accounts: whoever holds
// an API key of a project speaks for it. So the page asks for a key of the project; the person may
// grant at most that key's scope (and no more than the client asked for), and the tokens act as that
// key: revoking the key stops them. Plain server-rendered HTML, a labelled form, no script.
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import type { Principal, Scope } from '../auth/principal.js';
import { highestScope, lowerScope, SCOPES } from '../auth/principal.js';
import { ClientBinding, escapeHtml, scopesUpTo } from './provider.js';

export interface ConsentDeps {
  provider(): Provider;
  /** An API key's principal (keys only: a token cannot consent). */
  authenticateKey(secret: string): Promise<Principal | null>;
  audience(): string;
}

const SCOPE_TEXT: Record<Scope, string> = {
  read: 'read: read the project’s test cases, runs, sessions and artifacts',
  write: 'write: also create and change them, start and cancel runs, connect executors',
  admin: 'admin: also manage API keys, webhooks and the project',
};

interface Page {
  uid: string;
  clientName: string;
  redirectHost: string;
  requested: Scope[];
  error?: string;
}

function render(page: Page): string {
  const top = page.requested.at(-1) ?? 'read';
  const options = page.requested
    .map(
      (scope) => `
        <div class="option">
          <input type="radio" id="scope-${scope}" name="scope" value="${scope}"${scope === top ? ' checked' : ''}>
          <label for="scope-${scope}">${escapeHtml(SCOPE_TEXT[scope])}</label>
        </div>`,
    )
    .join('');
  const error = page.error ? `<p class="error" role="alert" id="error">${escapeHtml(page.error)}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${escapeHtml(page.clientName)}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
  main { max-width: 34rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  fieldset { border: 1px solid #c9ced8; border-radius: 6px; margin: 1rem 0; padding: .5rem 1rem 1rem; }
  .option { display: flex; gap: .5rem; align-items: baseline; margin: .4rem 0; }
  label.key { display: block; font-weight: 600; margin-top: 1rem; }
  input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #8a93a6; border-radius: 4px; }
  .hint { color: #4d5566; font-size: .9rem; }
  .error { background: #fdecea; color: #8a1c12; padding: .5rem .75rem; border-radius: 4px; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { font: inherit; padding: .55rem 1.2rem; border-radius: 4px; border: 1px solid #2b59c3; cursor: pointer; }
  button.primary { background: #2b59c3; color: #fff; }
  button.secondary { background: #fff; color: #2b59c3; }
  :focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
</style>
</head>
<body>
<main>
  <h1>Authorize ${escapeHtml(page.clientName)}</h1>
  <p><strong>${escapeHtml(page.clientName)}</strong> (returning to <code>${escapeHtml(page.redirectHost)}</code>) asks to act for one of your projects.</p>
  ${error}
  <form method="post" action="/oauth/interaction/${escapeHtml(page.uid)}/confirm">
    <label class="key" for="api_key">API key of the project</label>
    <input type="password" id="api_key" name="api_key" autocomplete="off" required aria-describedby="key-hint"${page.error ? ' autofocus' : ''}>
    <p class="hint" id="key-hint">The key decides the project. You can grant at most its scope; revoking the key later stops this access.</p>
    <fieldset>
      <legend>Access to grant</legend>${options}
    </fieldset>
    <div class="actions">
      <button type="submit" class="primary">Authorize</button>
      <button type="submit" class="secondary" formaction="/oauth/interaction/${escapeHtml(page.uid)}/abort" formnovalidate>Deny</button>
    </div>
  </form>
</main>
</body>
</html>`;
}

async function formBody(ctx: Koa.Context): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) break;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The scopes asked for, among the service's; all of them when none was named. */
function requestedScopes(scope: unknown): Scope[] {
  const named = String(scope ?? '')
    .split(' ')
    .filter((s) => (SCOPES as readonly string[]).includes(s)) as Scope[];
  return named.length ? SCOPES.filter((s) => named.includes(s)) : [...SCOPES];
}

const PATH = /^\/oauth\/interaction\/([\w-]+)(\/confirm|\/abort)?$/;

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;
type InteractionResult = Parameters<Provider['interactionResult']>[2];

export function consentMiddleware(deps: ConsentDeps): Koa.Middleware {
  return async (ctx, next) => {
    const match = PATH.exec(ctx.path);
    if (!match) return next();
    const provider = deps.provider();
    const details = await interactionOrExpired(provider, ctx);
    if (!details) return;
    if (details.uid !== match[1]) return next();
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) return next();
    const page = pageOf(details, client);
    ctx.set('Cache-Control', 'no-store');
    const action = match[2];
    if (ctx.method === 'GET' && !action) {
      ctx.type = 'html';
      ctx.body = render(page);
      return;
    }
    if (ctx.method !== 'POST' || !action) return next();
    const form = await formBody(ctx);
    if (action === '/abort')
      return finish(provider, ctx, {
        error: 'access_denied',
        error_description: 'The request was denied on the consent page',
      });
    const decision = await decide(deps, form, client, page);
    if ('error' in decision) {
      ctx.status = decision.status;
      ctx.type = 'html';
      ctx.body = render({ ...page, error: decision.error });
      return;
    }
    const { principal, granted } = decision;
    const resource = typeof details.params.resource === 'string' ? details.params.resource : deps.audience();
    const grant = new provider.Grant({ accountId: principal.keyId, clientId: client.clientId });
    grant.addResourceScope(resource, granted.join(' '));
    const grantId = await grant.save();
    return finish(provider, ctx, { login: { accountId: principal.keyId }, consent: { grantId } });
  };
}

/** The consent page of an interaction with a client. */
function pageOf(details: Interaction, client: Client): Page {
  return {
    uid: details.uid,
    clientName: client.clientName ?? client.clientId,
    redirectHost: new URL(String(details.params.redirect_uri)).host,
    requested: requestedScopes(details.params.scope),
  };
}

/** The interaction of the request; undefined once a page saying it expired has been answered. */
async function interactionOrExpired(provider: Provider, ctx: Koa.Context): Promise<Interaction | undefined> {
  try {
    return await provider.interactionDetails(ctx.req, ctx.res);
  } catch {
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization expired</title></head><body><main><h1>This authorization request has expired</h1><p>Start again from the application that sent you here.</p></main></body></html>';
    return undefined;
  }
}

/** Ends the interaction: the browser goes back to the client with the result. */
async function finish(provider: Provider, ctx: Koa.Context, result: InteractionResult): Promise<void> {
  const location = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  ctx.redirect(location);
  ctx.status = 303;
}

type Decision = { principal: Principal; granted: Scope[] } | { status: number; error: string };

/** What the submitted form grants: the key's principal and the scopes, or why it is refused. */
async function decide(deps: ConsentDeps, form: URLSearchParams, client: Client, page: Page): Promise<Decision> {
  const principal = await deps.authenticateKey(form.get('api_key')?.trim() ?? '');
  if (!principal) return { status: 401, error: 'That API key is unknown or revoked.' };
  if (principal.projectStatus !== 'active')
    return { status: 403, error: `Project ${principal.projectId} is ${principal.projectStatus}.` };
  const boundProject = client[ClientBinding.project] as string | undefined;
  if (boundProject && boundProject !== principal.projectId)
    return { status: 403, error: 'This client belongs to another project; use a key of that project.' };
  const chosen = highestScope([form.get('scope') ?? '']) ?? page.requested.at(-1)!;
  const granted = scopesUpTo(lowerScope(chosen, principal.scope)).filter((s) => page.requested.includes(s));
  if (!granted.length)
    return {
      status: 403,
      error: `This key has scope ${principal.scope}; the client asked only for ${page.requested.join(', ')}.`,
    };
  return { principal, granted };
}
