// `npx tsx benchmarks/hostile.ts`: what one hostile executor costs everyone else. A real service
// process (benchmarks/lib/service.ts), one executor sending frames built to provoke thousands of
// validation errors, and a bystander session and a REST client each measuring their round trip all
// along. Prints the largest answer to a hostile frame and the bystanders' delays, against their own
// baseline measured in the same run. The frames are those the issue reported (0.4 MB step.result with
// 200,000 wrong consoleErrors: a 27 MB answer and 1.7 to 3.7 s of stall before the fix).
import WebSocket from 'ws';
import { BENCH_KEY, startService } from './lib/service.js';
import { summarize } from './lib/stats.js';

let counter = 0;
const id = () => `msg_h${++counter}`;

function frame(type: string, payload: unknown, fields: Record<string, unknown>): string {
  return JSON.stringify({
    otp: '1.0',
    id: id(),
    ts: new Date().toISOString(),
    type,
    ...fields,
    ...(payload === undefined ? {} : { payload }),
  });
}

interface Client {
  ws: WebSocket;
  sessionId: string;
  /** Resolves with the next frame whose ref is `ref`, and its size in bytes. */
  answer(ref: string): Promise<{ frame: any; bytes: number }>;
}

async function connect(url: string): Promise<Client> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${BENCH_KEY}` }, maxPayload: 64 * 1024 * 1024 });
  const waiting = new Map<string, (a: { frame: any; bytes: number }) => void>();
  ws.on('message', (data: Buffer) => {
    const f = JSON.parse(data.toString());
    if (f.type === 'ping') ws.send(frame('pong', {}, { sessionId: f.sessionId, ref: f.id }));
    const key = f.type === 'welcome' ? 'welcome' : f.ref;
    waiting.get(key)?.({ frame: f, bytes: data.length });
    waiting.delete(key);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const answer = (ref: string) => new Promise<{ frame: any; bytes: number }>((resolve) => waiting.set(ref, resolve));
  const welcome = answer('welcome');
  ws.send(frame('hello', { executor: 'bench', capabilities: {} }, {}));
  const { frame: w } = await welcome;
  return { ws, sessionId: w.payload.sessionId, answer };
}

const service = await startService({ databaseUrl: process.env.DATABASE_URL, env: { OTP_KEEPALIVE_SEC: '60' } });
try {
  const hostile = await connect(service.otpUrl);
  const bystander = await connect(service.otpUrl);
  const envelope = (c: Client) => ({ sessionId: c.sessionId, runId: 'otr_x', ref: 'msg_x' });
  const hostileFrames: Array<[string, string]> = [
    [
      '200,000 wrong consoleErrors',
      frame(
        'step.result',
        { stepIndex: 0, status: 'pass', evidence: { consoleErrors: Array(200_000).fill(1) } },
        envelope(hostile),
      ),
    ],
    [
      '60,000 wrong triedLocators',
      frame(
        'step.result',
        {
          stepIndex: 0,
          status: 'fail',
          error: { code: 'E', message: 'x', triedLocators: Array(60_000).fill({ by: 'x' }) },
        },
        envelope(hostile),
      ),
    ],
    [
      '60,000 unknown members',
      frame(
        'step.result',
        Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1])),
        envelope(hostile),
      ),
    ],
  ];

  const probe = async () => {
    const text = frame('step.result', { stepIndex: 0, status: 'pass' }, envelope(bystander));
    const ref = JSON.parse(text).id;
    const started = performance.now();
    const answered = bystander.answer(ref);
    bystander.ws.send(text);
    await answered;
    return performance.now() - started;
  };
  const rest = async () => {
    const started = performance.now();
    await service.request('GET', '/otp/protocol');
    return performance.now() - started;
  };
  /** Probes back to back (both kinds at once) until `done` resolves. */
  const measure = async (done: Promise<unknown>) => {
    let over = false;
    void done.then(() => (over = true));
    const ws: number[] = [];
    const http: number[] = [];
    await Promise.all([
      (async () => {
        while (!over) ws.push(await probe());
      })(),
      (async () => {
        while (!over) http.push(await rest());
      })(),
    ]);
    return { ws: summarize(ws), http: summarize(http) };
  };

  const quiet = await measure(new Promise((r) => setTimeout(r, 2_000)));
  console.log(
    `baseline: bystander frame p50 ${quiet.ws.p50.toFixed(2)} ms, max ${quiet.ws.max.toFixed(1)} ms; REST p50 ${quiet.http.p50.toFixed(2)} ms, max ${quiet.http.max.toFixed(1)} ms`,
  );
  for (const [what, text] of hostileFrames) {
    const rounds = 10;
    // Ready before measuring: the client's own work on 0.5 MB strings must not count as the service's delay.
    const ack = frame('ack', undefined, { sessionId: hostile.sessionId, runId: 'otr_x', ref: 'msg_x' });
    const copies = Array.from({ length: rounds }, () => {
      const ref = id();
      return { ref, text: text.replace(/"id":"msg_h\d+"/, `"id":"${ref}"`) };
    });
    let largest = 0;
    const run = (async () => {
      for (const { ref, text: copy } of copies) {
        const answered = hostile.answer(ref);
        hostile.ws.send(copy);
        largest = Math.max(largest, (await answered).bytes);
        // A valid frame between invalid ones: three invalid frames in a row close a session.
        hostile.ws.send(ack);
      }
    })();
    const loaded = await measure(run);
    console.log(
      `${what} (${(text.length / 1e6).toFixed(2)} MB, ${rounds} times): largest answer ${largest} B; ` +
        `bystander frame p50 ${loaded.ws.p50.toFixed(2)} ms, max ${loaded.ws.max.toFixed(1)} ms; REST p50 ${loaded.http.p50.toFixed(2)} ms, max ${loaded.http.max.toFixed(1)} ms`,
    );
  }
  hostile.ws.close();
  bystander.ws.close();
} finally {
  await service.stop();
}
