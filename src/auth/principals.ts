// The one place a credential becomes a principal, for every door (REST, the OTP socket, MCP): an API
// key (`svc_pk_...`, through the key cache) or an OAuth access token (a JWT, through the verifier).
// Anything else, and any refusal, is null: callers answer it as they answer a bad key.
import { type AuthOptions, admit, KEY_PREFIX, type KeyCache } from './keys.js';
import type { Principal } from './principal.js';
import { looksLikeJwt, type TokenVerifier } from './tokens.js';

export class Principals {
  constructor(
    private readonly keys: KeyCache,
    private readonly tokens: TokenVerifier,
  ) {}

  /** A key held in memory is answered at once (no promise); a token is always checked. */
  resolve(credential: string, options: AuthOptions = {}): Principal | null | Promise<Principal | null> {
    if (credential.startsWith(KEY_PREFIX)) return this.keys.authenticate(credential, options);
    if (looksLikeJwt(credential)) return this.tokens.principal(credential).then((p) => admit(p, options));
    return null;
  }
}
