// The three doors a credential opens: REST, the OTP socket, MCP.

import { TestExecutor } from '../support/executor.js';
import type { TestService } from '../support/service.js';

export interface Doors {
  rest: number;
  socket: number | 'welcome';
  mcp: number;
}

/** What each door answers a credential: REST status, the socket's welcome or close code, MCP status. */
export async function tryDoors(t: TestService, credential: string, via: 'header' | 'query' = 'header'): Promise<Doors> {
  const rest = (await t.request('GET', '/tests/cases', { key: credential })).status;
  const executor = await TestExecutor.connect(t.otpUrl, { key: credential, via });
  const socket = await Promise.race([
    executor.closed.then((c) => c.code),
    executor.hello().then(
      () => 'welcome' as const,
      () => executor.closed.then((c) => c.code),
    ),
  ]);
  executor.close();
  const mcp = await fetch(`${t.service.restUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return { rest, socket, mcp: mcp.status };
}

export const REFUSED: Doors = { rest: 401, socket: 4401, mcp: 401 };
export const ACCEPTED: Doors = { rest: 200, socket: 'welcome', mcp: 200 };
