// The OAuth 2.1 authorization server: oidc-provider configured for this service. Authorization code
// with PKCE (S256 only), refresh tokens (rotated), client credentials, dynamic registration and
// revocation. Access tokens are JWTs (resource indicators, RFC 9068) for one audience, the service,
// and carry the tenant, project and key they act for (src/auth/tokens.ts reads them back).
import Provider, {
  type Configuration,
  errors,
  interactionPolicy,
  type JWK,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { Principal, Scope } from '../auth/principal.js';
import { SCOPES } from '../auth/principal.js';
import { TokenClaim } from '../auth/tokens.js';
import type { Db } from '../db/connect.js';
import { knexAdapter } from './adapter.js';
import { SIGNING_ALG } from './signing-keys.js';

/** Metadata the service sets on a client registered with an admin key: the project it is bound to. */
export const ClientBinding = {
  tenant: 'svc_tenant_id',
  project: 'svc_project_id',
  key: 'svc_key_id',
  scope: 'svc_scope',
} as const;
const BINDING = Object.values(ClientBinding);

export interface ProviderOptions {
  db: Db;
  issuer: string;
  /** The audience of every access token (the service's base URL with a trailing slash). */
  audience: string;
  jwks: JWK[];
  cookieKeys: string[];
  ttl: { accessTokenSec: number; refreshTokenSec: number };
  principalOfKeyId(keyId: string): Promise<Principal | null>;
  /** The consent page of an interaction. */
  interactionPath(uid: string): string;
}

/** The scopes up to and including `top`: a key with write may grant read and write. */
export function scopesUpTo(top: Scope): Scope[] {
  return SCOPES.slice(0, SCOPES.indexOf(top) + 1);
}

type Ctx = KoaContextWithOIDC & { state: { registrar?: Principal } };

export function buildProvider(options: ProviderOptions): Provider {
  const { principalOfKeyId } = options;
  const configuration: Configuration = {
    adapter: knexAdapter(options.db),
    jwks: { keys: options.jwks },
    cookies: { keys: options.cookieKeys },
    clients: [],
    scopes: [...SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: SIGNING_ALG,
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALG] } as Configuration['enabledJWA'],
    interactions: { url: (_ctx, interaction) => options.interactionPath(interaction.uid), policy: consentPolicy() },
    features: features(options),
    ttl: {
      AccessToken: options.ttl.accessTokenSec,
      ClientCredentials: options.ttl.accessTokenSec,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: options.ttl.refreshTokenSec,
      RefreshToken: options.ttl.refreshTokenSec,
    },
    // OAuth 2.1 without OpenID: a refresh token for every client allowed the grant, no offline_access needed.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    findAccount: async (_ctx, id) =>
      (await principalOfKeyId(id)) ? { accountId: id, claims: async () => ({ sub: id }) } : undefined,
    extraClientMetadata: { properties: BINDING, validator: bindRegisteredClient },
    clientBasedCORS: (_ctx, origin, client) =>
      corsAllowed(origin, client.clientAuthMethod ?? '', client.redirectUris ?? []),
    extraTokenClaims: tokenClaims(principalOfKeyId),
    // Errors of the browser-facing endpoints as a small page; the JSON endpoints answer JSON themselves.
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization error</title></head><body><main><h1>Authorization error</h1><p>${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p></main></body></html>`;
    },
  };
  const provider = new Provider(options.issuer, configuration);
  provider.proxy = true;
  return provider;
}

/**
 * Which pages may call the token endpoints from a browser: a public client's own pages (the origin of
 * one of its redirect URIs, oidc-provider's default rule) and, for a browser extension whose redirect
 * URI is https://<id>.chromiumapp.org/ (chrome.identity), that extension's pages (chrome-extension://<id>).
 */
export function corsAllowed(origin: string, authMethod: string, redirectUris: readonly string[]): boolean {
  if (origin === 'null' || authMethod !== 'none') return false;
  return redirectUris.some((uri) => {
    const url = URL.parse(uri);
    const extension = url?.protocol === 'https:' && /^([a-p]{32})\.chromiumapp\.org$/.exec(url.hostname);
    return url?.origin === origin || (extension && origin === `chrome-extension://${extension[1]}`);
  });
}

/**
 * The interaction policy: a person may grant less than the client asked for, and the consent prompt
 * does not come back for the scopes left out (the token then carries only those granted).
 */
function consentPolicy() {
  const policy = interactionPolicy.base();
  const consent = policy.get('consent')!;
  consent.checks.remove('op_scopes_missing');
  consent.checks.remove('rs_scopes_missing');
  return policy;
}

/** The grants and endpoints the provider offers, and the one resource server its tokens are for. */
function features(options: ProviderOptions): Configuration['features'] {
  const { audience } = options;
  const base = audience.replace(/\/$/, '');
  return {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    // A client revokes only its own tokens.
    revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    userinfo: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      // The service is one resource server: a token asked for it, or for a part of it such as /mcp
      // (what MCP clients send), is for all of it.
      getResourceServerInfo: (_ctx, resource, client) => {
        if (resource !== audience && !resource.startsWith(`${base}/`)) throw new errors.InvalidTarget();
        const bound = client[ClientBinding.scope] as Scope | undefined;
        return {
          scope: scopesUpTo(bound ?? 'admin').join(' '),
          audience,
          accessTokenTTL: options.ttl.accessTokenSec,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: SIGNING_ALG } },
        };
      },
    },
  };
}

type ClientMetadataValidator = NonNullable<NonNullable<Configuration['extraClientMetadata']>['validator']>;

/**
 * Called whenever a client is built: at registration the binding comes from the admin key the
 * request carried (never from the request body); a client loaded from storage keeps its own.
 */
const bindRegisteredClient: ClientMetadataValidator = (ctx, key, _value, metadata) => {
  const c = ctx as Ctx | undefined;
  if (c?.oidc?.route !== 'registration') return;
  const registrar = c.state.registrar;
  const binding = registrar
    ? {
        svc_tenant_id: registrar.tenantId,
        svc_project_id: registrar.projectId,
        svc_key_id: registrar.keyId,
        svc_scope: registrar.scope,
      }
    : undefined;
  (metadata as Record<string, unknown>)[key] = binding?.[key as keyof typeof binding];
  if (!registrar && key === ClientBinding.key && (metadata.grant_types ?? []).includes('client_credentials')) {
    throw new errors.InvalidClientMetadata(
      'client_credentials needs a client registered with an admin API key of the project (Authorization: Bearer svc_pk_...)',
    );
  }
};

/** The claims of an access token: the tenant, project and key it acts for (and the grant of a person's consent). */
function tokenClaims(principalOfKeyId: ProviderOptions['principalOfKeyId']): Configuration['extraTokenClaims'] {
  return async (ctx, token) => {
    if (token.kind === 'ClientCredentials') {
      const client = (ctx as KoaContextWithOIDC).oidc.client!;
      return {
        [TokenClaim.tenant]: client[ClientBinding.tenant],
        [TokenClaim.project]: client[ClientBinding.project],
        [TokenClaim.key]: client[ClientBinding.key],
      };
    }
    const accountId = (token as { accountId?: string }).accountId;
    const principal = accountId ? await principalOfKeyId(accountId) : null;
    if (!principal) throw new errors.InvalidGrant('the API key that consented has been revoked');
    return {
      [TokenClaim.tenant]: principal.tenantId,
      [TokenClaim.project]: principal.projectId,
      [TokenClaim.key]: principal.keyId,
      [TokenClaim.grant]: (token as { grantId?: string }).grantId,
    };
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
