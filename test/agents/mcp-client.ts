// An MCP client as agents use it: the official SDK Client over Streamable HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export async function mcpClient(restUrl: string, credential: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '0.0.1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${restUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  return client;
}

/** A tool call's structured answer, and whether it is a tool error. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; body: any }> {
  const result = await client.callTool({ name, arguments: args });
  return { isError: Boolean(result.isError), body: result.structuredContent };
}
