// A minimal OTP executor, written from docs/protocol.md alone. It performs no real browser work:
// every step "passes" (asserts report `actual`), which is enough to see a run go through.
//
//   OTP_URL=ws://127.0.0.1:8081/otp OTP_KEY=svc_pk_... node docs/examples/minimal-executor.mjs
//
// It exits after the first run.finished when ONE_RUN=1.
import WebSocket from 'ws';

const url = process.env.OTP_URL ?? 'ws://127.0.0.1:8081/otp';
const key = process.env.OTP_KEY;
if (!key) throw new Error('set OTP_KEY to an API key with scope write');

let counter = 0;
let sessionId;
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });

function send(type, payload, extra = {}) {
  const frame = { otp: '1.0', id: `msg_${++counter}`, ts: new Date().toISOString(), type, ...extra };
  if (sessionId) frame.sessionId = sessionId;
  if (payload !== undefined) frame.payload = payload;
  ws.send(JSON.stringify(frame));
}

ws.on('open', () => {
  send('hello', {
    executor: 'runner',
    name: 'minimal-executor',
    version: '1.0.0',
    capabilities: {
      record: false,
      replay: true,
      screenshot: false,
      upload: false,
      crossOrigin: false,
      eval: false,
      maxParallel: 1,
    },
  });
});

ws.on('message', (data) => {
  const frame = JSON.parse(data.toString());
  switch (frame.type) {
    case 'welcome':
      sessionId = frame.payload.sessionId;
      console.log(`session ${sessionId}`);
      break;
    case 'ping':
      send('pong', undefined, { ref: frame.id });
      break;
    case 'run.start':
      console.log(`run ${frame.runId}: ${frame.payload.totalSteps} steps`);
      send('ack', undefined, { runId: frame.runId, ref: frame.id });
      break;
    case 'step.exec': {
      const { stepIndex, step } = frame.payload;
      const result = { stepIndex, status: 'pass', durationMs: 1 };
      if (step.action === 'assert' && step.expected !== undefined) result.actual = step.expected;
      console.log(`  step ${stepIndex}: ${step.action} -> pass`);
      send('step.result', result, { runId: frame.runId, ref: frame.id });
      break;
    }
    case 'run.cancel':
      send('ack', undefined, { runId: frame.runId, ref: frame.id });
      break;
    case 'run.finished':
      console.log(`run ${frame.runId} finished: ${JSON.stringify(frame.payload)}`);
      if (process.env.ONE_RUN === '1') ws.close(1000);
      break;
    case 'error':
      console.error(`error ${frame.payload.code}: ${frame.payload.message}`);
      break;
  }
});

ws.on('close', (code, reason) => {
  console.log(`closed ${code} ${reason}`);
  process.exit(code === 1000 ? 0 : 1);
});
