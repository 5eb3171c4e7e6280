// /mcp and its protected-resource metadata in /openapi.json. MCP itself is JSON-RPC (its tools are
// listed by tools/list, not here); the document says where it is and how it authenticates.
import { MCP_PATH, RESOURCE_METADATA_PATH } from './server.js';

const metadata = {
  get: {
    tags: ['mcp'],
    security: [],
    responses: {
      200: {
        description: 'RFC 9728 protected-resource metadata: resource, authorization_servers, scopes_supported',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  },
};

export const mcpOpenApiPaths: Record<string, Record<string, unknown>> = {
  [MCP_PATH]: {
    post: {
      operationId: 'mcp',
      tags: ['mcp'],
      security: [{ apiKey: ['read'] }],
      summary:
        'MCP over Streamable HTTP, stateless (JSON-RPC: initialize, tools/list, tools/call). Tools of tier 1 need read, tier 2 write. Without a credential: 401 with WWW-Authenticate: Bearer resource_metadata=...',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', description: 'A JSON-RPC 2.0 message' } } },
      },
      responses: {
        200: {
          description: 'The JSON-RPC answer; a tool failure is a result with isError and the REST error body',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        202: { description: 'A notification was accepted' },
        401: { $ref: '#/components/responses/Unauthorized' },
        // The credential is checked against the database; a tool that needs it answers isError with database_unavailable.
        503: { $ref: '#/components/responses/Unavailable' },
      },
    },
  },
  [`${RESOURCE_METADATA_PATH}${MCP_PATH}`]: {
    get: { ...metadata.get, operationId: 'getMcpResourceMetadata', summary: 'Protected-resource metadata of /mcp' },
  },
  [RESOURCE_METADATA_PATH]: {
    get: {
      ...metadata.get,
      operationId: 'getResourceMetadata',
      summary: 'Protected-resource metadata of the whole service (audience {base}/)',
    },
  },
};
