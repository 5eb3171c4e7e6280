// The OAuth endpoints in /openapi.json. They are OAuth's, not REST's: form-encoded requests and
// OAuth error bodies (`{ error, error_description }`), as RFC 6749, 7009, 7591 and 8414 define them.
// The authorization and consent endpoints are pages for a browser and are not listed.
const oauthError = {
  description: 'An OAuth error',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'string' }, error_description: { type: 'string' } },
      },
    },
  },
};
const form = (properties: Record<string, unknown>, required: string[]) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties } } },
});
const str = { type: 'string' };
const json = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({
  description,
  content: { 'application/json': { schema } },
});

export const oauthOpenApiPaths: Record<string, Record<string, unknown>> = {
  '/.well-known/oauth-authorization-server/oauth': {
    get: {
      operationId: 'getOAuthServerMetadata',
      tags: ['oauth'],
      security: [],
      summary:
        'Authorization server metadata (RFC 8414) of the issuer {base}/oauth; also at /oauth/.well-known/openid-configuration',
      responses: {
        200: json(
          'The metadata: endpoints, grant types, code_challenge_methods_supported [S256], scopes read, write, admin',
        ),
      },
    },
  },
  '/oauth/reg': {
    post: {
      operationId: 'registerOAuthClient',
      tags: ['oauth'],
      security: [],
      summary:
        "Dynamic client registration (RFC 7591). With Authorization: Bearer <admin API key>, the client is bound to that key's project and may use client_credentials",
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                client_name: str,
                redirect_uris: { type: 'array', items: str },
                grant_types: {
                  type: 'array',
                  items: { enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
                },
                token_endpoint_auth_method: { enum: ['none', 'client_secret_basic', 'client_secret_post'] },
              },
            },
          },
        },
      },
      responses: {
        201: json(
          'The registered client (client_id, client_secret for confidential clients, svc_project_id when bound)',
        ),
        400: oauthError,
        401: oauthError,
        403: oauthError,
      },
    },
  },
  '/oauth/token': {
    post: {
      operationId: 'getOAuthToken',
      tags: ['oauth'],
      security: [],
      summary:
        'Token endpoint: authorization_code (with code_verifier), refresh_token, client_credentials. Access tokens are JWTs (typ at+jwt) for the audience {base}/',
      requestBody: form(
        {
          grant_type: { enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
          code: str,
          redirect_uri: str,
          code_verifier: str,
          refresh_token: str,
          client_id: str,
          scope: { type: 'string', description: 'read, write, admin (space separated)' },
          resource: str,
        },
        ['grant_type'],
      ),
      responses: {
        200: json('Tokens', {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in'],
          properties: {
            access_token: str,
            token_type: str,
            expires_in: { type: 'integer' },
            refresh_token: str,
            scope: str,
          },
        }),
        400: oauthError,
        401: oauthError,
      },
    },
  },
  '/oauth/token/revocation': {
    post: {
      operationId: 'revokeOAuthToken',
      tags: ['oauth'],
      security: [],
      summary:
        'Token revocation (RFC 7009): an access token (JWT) or a refresh token of the calling client; revoking a refresh token ends its grant and every access token of it',
      requestBody: form({ token: str, token_type_hint: { enum: ['access_token', 'refresh_token'] }, client_id: str }, [
        'token',
      ]),
      responses: { 200: { description: 'Revoked, or nothing to revoke' }, 400: oauthError, 401: oauthError },
    },
  },
  '/oauth/jwks': {
    get: {
      operationId: 'getOAuthJwks',
      tags: ['oauth'],
      security: [],
      summary: 'Public keys that sign access tokens: the active key first, then retiring ones',
      // The provider answers the JWK Set media type of RFC 7517.
      responses: {
        200: {
          description: 'A JWK set',
          content: {
            'application/jwk-set+json': {
              schema: {
                type: 'object',
                required: ['keys'],
                properties: { keys: { type: 'array', items: { type: 'object' }, description: 'RFC 7517 keys' } },
              },
            },
          },
        },
      },
    },
  },
};
