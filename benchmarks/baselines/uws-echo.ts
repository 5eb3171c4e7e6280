// Baseline: a bare uWebSockets.js server that parses each JSON frame and answers a step-sized JSON
// frame. The ceiling for any JavaScript WebSocket server on this machine. Prints {"port":N} when ready.
import uWS from 'uWebSockets.js';
import { baselineAnswer } from '../lib/frames.js';

const app = uWS.App().ws('/*', {
  maxPayloadLength: 4 * 1024 * 1024,
  idleTimeout: 0,
  sendPingsAutomatically: false,
  message: (ws, message) => {
    ws.send(baselineAnswer(Buffer.from(message).toString('utf8')), false);
  },
});

app.listen('127.0.0.1', Number(process.argv[2] ?? 0), (socket) => {
  if (!socket) {
    console.error('uws-echo: could not listen');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket) })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
