// What one hostile client costs everyone else: the answer to a frame or body built to provoke
// thousands of validation errors stays small, and another session's frame and a REST request are
// not held up while it is checked (the unbounded check held every other client for 1.7 to 3.7 s).
import { expect } from 'chai';
import { type Frame, msgId, TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const MIB = 1024 * 1024;
// The answers must stay far below the protocol's frame limit, not merely under it.
const SMALL_ANSWER = 64 * 1024;

function frameText(type: string, payload: unknown, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ otp: '1.0', id: msgId(), ts: new Date().toISOString(), type, ...fields, payload });
}

describe('Hostile input: bounded answers and bounded work', () => {
  let t: TestService;
  let hostile: TestExecutor;
  let bystander: TestExecutor;
  // Every raw frame the hostile executor receives, with its size in bytes.
  const sizes: number[] = [];

  before(async () => {
    // Invalid frames in a row close a session after 3; these tests send more on purpose.
    t = await startTestService({ otp: { maxInvalidFrames: 1000 } });
    hostile = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    hostile.ws.on('message', (data: Buffer) => sizes.push(data.length));
    await hostile.hello();
    bystander = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    await bystander.hello();
  });
  after(async () => {
    hostile?.close();
    bystander?.close();
    await t?.stop();
  });

  /** Sends a frame once the socket has handed it to the kernel; answers the error frame that refs it. */
  async function sendHostile(text: string): Promise<{ error: Frame; bytes: number }> {
    const id = (JSON.parse(text) as { id: string }).id;
    const before = sizes.length;
    await new Promise<void>((resolve, reject) => hostile.ws.send(text, (err) => (err ? reject(err) : resolve())));
    const error = await hostile.next('error', (f) => f.ref === id, 20_000);
    return { error, bytes: Math.max(...sizes.slice(before)) };
  }

  /** The bystander's round trip: a well-formed step.result for no run, answered E_UNEXPECTED. */
  async function probe(): Promise<number> {
    const started = performance.now();
    const id = bystander.send('step.result', { stepIndex: 0, status: 'pass' }, { runId: 'otr_none', ref: 'msg_x' });
    await bystander.next('error', (f) => f.ref === id);
    return performance.now() - started;
  }

  async function restRoundTrip(): Promise<number> {
    const started = performance.now();
    const res = await t.request('GET', '/otp/protocol');
    expect(res.status).to.equal(200);
    return performance.now() - started;
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  it('answers 200,000 wrong consoleErrors with one short error, and others wait no longer than a few of their own round trips', async () => {
    const samples: number[] = [];
    const restSamples: number[] = [];
    for (let i = 0; i < 15; i++) {
      samples.push(await probe());
      restSamples.push(await restRoundTrip());
    }
    // Generous: a loaded machine stretches the baseline too. The unbounded check took 1.7 to 3.7 s.
    const bound = 250 + 20 * median(samples);
    const restBound = 250 + 20 * median(restSamples);

    const text = frameText(
      'step.result',
      { stepIndex: 0, status: 'pass', evidence: { consoleErrors: Array(200_000).fill(1) } },
      {
        sessionId: hostile.sessionId,
        runId: 'otr_x',
        ref: 'msg_x',
      },
    );
    expect(text.length).to.be.within(0.38 * MIB, MIB);
    const id = (JSON.parse(text) as { id: string }).id;
    const sent = new Promise<void>((resolve, reject) =>
      hostile.ws.send(text, (err) => (err ? reject(err) : resolve())),
    );
    const answered = hostile.next('error', (f) => f.ref === id, 20_000);
    await sent;
    const [delay, restDelay] = await Promise.all([probe(), restRoundTrip()]);
    const error = await answered;
    expect(error.payload.code).to.equal('E_INVALID_FRAME');
    expect(JSON.stringify(error).length).to.be.below(SMALL_ANSWER);
    expect(error.payload.details.fields.length).to.be.at.most(21);
    expect(delay, `bystander's round trip (baseline ${median(samples).toFixed(1)} ms)`).to.be.below(bound);
    expect(restDelay, `REST round trip (baseline ${median(restSamples).toFixed(1)} ms)`).to.be.below(restBound);
  });

  it('keeps every answer to a hostile frame far below the 1 MiB frame limit', async () => {
    const envelope = { sessionId: hostile.sessionId, runId: 'otr_x', ref: 'msg_x' };
    const frames: Array<[string, string]> = [
      [
        '60,000 invalid locators',
        frameText(
          'step.result',
          {
            stepIndex: 0,
            status: 'fail',
            error: { code: 'E', message: 'x', triedLocators: Array(60_000).fill({ by: 'x' }) },
          },
          envelope,
        ),
      ],
      [
        '60,000 unknown payload members',
        frameText('step.result', Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1])), envelope),
      ],
      [
        'an unknown member whose name is 700,000 characters',
        frameText('step.result', { stepIndex: 0, status: 'pass', ['k'.repeat(700_000)]: 1 }, envelope),
      ],
      [
        'a type of 700,000 characters',
        JSON.stringify({ otp: '1.0', id: msgId(), ts: new Date().toISOString(), type: 't'.repeat(700_000) }),
      ],
      [
        'an enum value of 700,000 characters',
        frameText('step.result', { stepIndex: 0, status: 's'.repeat(700_000) }, envelope),
      ],
    ];
    for (const [what, text] of frames) {
      expect(text.length, what).to.be.below(MIB);
      const { error, bytes } = await sendHostile(text);
      expect(error.payload.code, what).to.equal('E_INVALID_FRAME');
      expect(bytes, what).to.be.below(SMALL_ANSWER);
    }
    // An id of any length is not echoed as ref: the answer carries no ref then.
    const longId = `msg_${'x'.repeat(700_000)}`;
    hostile.raw(
      JSON.stringify({
        otp: '1.0',
        id: longId,
        ts: new Date().toISOString(),
        type: 'pong',
        sessionId: hostile.sessionId,
      }),
    );
    const error = await hostile.next('error', (f) => f.ref === undefined && f.payload.code === 'E_INVALID_FRAME');
    expect(JSON.stringify(error).length).to.be.below(SMALL_ANSWER);
  });

  it('lists at most 20 problems of a small frame and says how many more there were', async () => {
    const text = frameText(
      'step.result',
      { stepIndex: 0, status: 'pass', evidence: { consoleErrors: Array(50).fill(1) } },
      {
        sessionId: hostile.sessionId,
        runId: 'otr_x',
        ref: 'msg_x',
      },
    );
    const { error } = await sendHostile(text);
    const fields = error.payload.details.fields as Array<{ field: string; message: string }>;
    expect(fields).to.have.length(21);
    expect(fields[0]).to.deep.equal({ field: 'payload.evidence.consoleErrors[0]', message: 'must be a string' });
    expect(fields[20]).to.deep.equal({ field: '(more)', message: '30 more problems not listed' });
  });

  it('answers a REST body built for many errors with a short 400', async () => {
    const bodies: Array<[string, unknown]> = [
      ['400 wrong steps', { title: 'x', steps: Array(400).fill(1) }],
      ['200,000 wrong steps', { title: 'x', steps: Array(200_000).fill(1) }],
      ['60,000 unknown members', Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1]))],
    ];
    for (const [what, body] of bodies) {
      const res = await t.request('POST', '/tests/cases', { body });
      expect(res.status, what).to.equal(400);
      expect(res.body.error.code, what).to.equal('VALIDATION_ERROR');
      expect(JSON.stringify(res.body).length, what).to.be.below(SMALL_ANSWER);
      expect(res.body.error.details.fields.length, what).to.be.at.most(21);
    }
    const listed = await t.request('POST', '/tests/cases', { body: { title: 'x', steps: Array(400).fill(1) } });
    expect(listed.body.error.details.fields.at(-1)).to.deep.equal({
      field: '(more)',
      message: '380 more problems not listed',
    });
  });
});
