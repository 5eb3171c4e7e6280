// Every frame the service sends is checked against the protocol's own schemas in the real extension
// before it is acted on (validators compiled at build time: an MV3 worker may not eval). A stand-in
// service on a plain WebSocket server sends frames that break the schemas: each is answered with an
// error frame E_INVALID_FRAME naming the problem, and nothing happens (no window opens); the same
// frames made valid are acted on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { type WebSocket, WebSocketServer } from 'ws';
import { type ExtensionBrowser, launchExtension } from './harness.js';

const envelope = (type: string, extra: Record<string, unknown> = {}) => ({
  otp: '1.0',
  id: `msg_${type.replace('.', '_')}${Math.random().toString(36).slice(2, 8)}`,
  ts: new Date().toISOString(),
  type,
  ...extra,
});

describe('the extension: frames that break the schemas are refused, not acted on', function () {
  this.timeout(60_000);
  let server: http.Server;
  let wss: WebSocketServer;
  let ext: ExtensionBrowser;
  const received: any[] = [];
  const waiters: Array<() => void> = [];
  let socket: WebSocket;

  before(async () => {
    server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Stand-in page</title>'),
    );
    wss = new WebSocketServer({ server, path: '/otp' });
    const connected = new Promise<void>((resolve) =>
      wss.on('connection', (ws) => {
        socket = ws;
        ws.on('message', (data) => {
          const frame = JSON.parse(String(data));
          received.push(frame);
          if (frame.type === 'hello')
            ws.send(
              JSON.stringify(
                envelope('welcome', {
                  sessionId: 'ots_standin',
                  ref: frame.id,
                  payload: {
                    sessionId: 'ots_standin',
                    serverTime: new Date().toISOString(),
                    keepaliveSec: 25,
                    limits: {
                      maxFrameBytes: 1048576,
                      maxSteps: 500,
                      stepTimeoutMs: 30000,
                      maxParallel: 1,
                      keepaliveSec: 25,
                    },
                  },
                }),
              ),
            );
          for (const wake of waiters.splice(0)) wake();
        });
        resolve();
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    ext = await launchExtension({ otpUrl: `ws://127.0.0.1:${port}/otp`, token: 'svc_pk_standin' });
    await connected;
    await ext.sessionId();
  });
  after(async () => {
    await ext?.close();
    wss?.close();
    server?.close();
  });

  /** The next frame of this type the extension sends. */
  async function next(type: string, from: number): Promise<any> {
    for (;;) {
      const found = received.slice(from).find((f) => f.type === type);
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  const windows = async () =>
    (await ext.worker()).evaluate(async () => (await (globalThis as any).chrome.windows.getAll()).length);

  it('says hello with the capabilities it has, as an extension', () => {
    const hello = received.find((f) => f.type === 'hello');
    expect(hello.payload).to.deep.include({ executor: 'extension' });
    expect(hello.payload.capabilities).to.deep.equal({
      record: true,
      replay: true,
      screenshot: true,
      upload: true,
      crossOrigin: true,
      eval: false,
      maxParallel: 1,
    });
  });

  it('answers each frame that breaks its schema with E_INVALID_FRAME and acts on none', async () => {
    const before = await windows();
    const runStart = {
      runId: 'otr_standin',
      vars: {},
      allowedOrigins: [],
      testCases: [{ id: 'tc_1', title: 'x', steps: 1 }],
      totalSteps: 1,
      defaults: { stepTimeoutMs: 30000 },
    };
    const bad = [
      envelope('run.start', {
        sessionId: 'ots_standin',
        runId: 'otr_standin',
        payload: { ...runStart, surprise: true },
      }),
      envelope('run.start', { sessionId: 'ots_standin', runId: 'not-a-run-id', payload: runStart }),
      envelope('step.exec', {
        sessionId: 'ots_standin',
        runId: 'otr_standin',
        payload: { stepIndex: 0, timeoutMs: 1000, continueOnFail: false, step: { action: 'teleport' } },
      }),
      envelope('launch.rockets', { sessionId: 'ots_standin' }),
    ];
    for (const frame of bad) {
      const from = received.length;
      socket.send(JSON.stringify(frame));
      const error = await next('error', from);
      expect(error.ref, frame.type).to.equal(frame.id);
      expect(error.payload.code).to.equal('E_INVALID_FRAME');
    }
    const from = received.length;
    socket.send('not json at all');
    expect((await next('error', from)).payload.message).to.match(/not JSON/);
    expect(received.filter((f) => f.type === 'ack' || f.type === 'step.result')).to.deep.equal([]);
    expect(await windows(), 'no run window opened').to.equal(before);
  });

  it('acts on the same frames once valid: a run opens its window and its step is answered', async () => {
    const port = (server.address() as AddressInfo).port;
    const from = received.length;
    socket.send(
      JSON.stringify(
        envelope('run.start', {
          sessionId: 'ots_standin',
          runId: 'otr_standin',
          payload: {
            runId: 'otr_standin',
            vars: {},
            allowedOrigins: [`http://127.0.0.1:${port}`],
            testCases: [{ id: 'tc_1', title: 'x', steps: 1 }],
            totalSteps: 1,
            defaults: { stepTimeoutMs: 30000 },
          },
        }),
      ),
    );
    socket.send(
      JSON.stringify(
        envelope('step.exec', {
          sessionId: 'ots_standin',
          runId: 'otr_standin',
          payload: {
            stepIndex: 0,
            timeoutMs: 5000,
            continueOnFail: false,
            evidence: 'never',
            step: { action: 'navigate', url: `http://127.0.0.1:${port}/` },
          },
        }),
      ),
    );
    expect((await next('ack', from)).runId).to.equal('otr_standin');
    const result = await next('step.result', from);
    expect(result.payload).to.deep.include({ stepIndex: 0, status: 'pass' });
  });

  it('refuses an eval step it did not declare (allow eval is off), and runs nothing in the page', async () => {
    const from = received.length;
    socket.send(
      JSON.stringify(
        envelope('step.exec', {
          sessionId: 'ots_standin',
          runId: 'otr_standin',
          payload: {
            stepIndex: 1,
            timeoutMs: 5000,
            continueOnFail: false,
            evidence: 'never',
            step: { action: 'eval', script: 'document.title = "changed"' },
          },
        }),
      ),
    );
    const refused = await next('step.result', from);
    expect(refused.payload).to.deep.include({ stepIndex: 1, status: 'skip' });
    expect(refused.payload.error.code).to.equal('E_CAPABILITY');
    const after = received.length;
    socket.send(
      JSON.stringify(
        envelope('step.exec', {
          sessionId: 'ots_standin',
          runId: 'otr_standin',
          payload: {
            stepIndex: 2,
            timeoutMs: 5000,
            continueOnFail: false,
            evidence: 'never',
            step: { action: 'assert', kind: 'title', expected: 'Stand-in page' },
          },
        }),
      ),
    );
    expect((await next('step.result', after)).payload).to.deep.include({
      stepIndex: 2,
      status: 'pass',
      actual: 'Stand-in page',
    });
  });
});
