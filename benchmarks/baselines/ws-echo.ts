// Baseline: the same echo as uws-echo.ts over the `ws` package (Node's own http server underneath).

import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { baselineAnswer } from '../lib/frames.js';

const server = new WebSocketServer({
  host: '127.0.0.1',
  port: Number(process.argv[2] ?? 0),
  perMessageDeflate: false,
  maxPayload: 4 * 1024 * 1024,
});
server.on('connection', (ws) => {
  ws.on('message', (data) => ws.send(baselineAnswer(data.toString())));
});
server.on('listening', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
