// Whole frames in each direction: the envelope members a type carries, its payload, and what an
// executor is told about a frame that is not an object or has no usable type.
import { expect } from 'chai';
import type { HelloPayload, StepExecPayload, StepReport } from '../../machines/types.js';
import { OUTBOUND_TYPES } from '../../src/otp/protocol/schemas/index.js';
import { validateInbound, validateOutbound } from '../../src/otp/protocol/validators.js';
import { css, envelope, expectError, expectOnly, expectValid, RUN, SESSION, TS } from './helpers.js';

describe('Frames from the executor: the envelope members of each type, payloads, unusable types', () => {
  const hello = (payload: object, extra: Record<string, unknown> = {}) => envelope('hello', { payload, ...extra });
  const helloPayload: HelloPayload = {
    executor: 'runner',
    name: 'ci-runner',
    version: '2.1.0',
    capabilities: {
      record: false,
      replay: true,
      screenshot: true,
      upload: true,
      crossOrigin: false,
      eval: true,
      maxParallel: 4,
    },
    projectId: 'prj_01hx7q9c2m3n4p5r6s7t8v9w0y',
  };
  const report: StepReport = {
    stepIndex: 2,
    status: 'fail',
    durationMs: 5012,
    error: {
      code: 'E_LOCATOR_NOT_FOUND',
      message: 'no match',
      triedLocators: [
        { by: 'testid', value: 'save' },
        { by: 'text', value: 'Save' },
      ],
    },
    evidence: { screenshotAssetId: 'ast_01hx7q9c2m3n4p5r6s7t8v9w0y', consoleErrors: ['TypeError: x is undefined'] },
    actual: 'Cancel',
  };
  const stepResult = (payload: unknown, extra: Record<string, unknown> = {}) =>
    envelope('step.result', { sessionId: SESSION, runId: RUN, ref: 'msg_exec1', payload, ...extra });

  it('accepts hello, minimal and full, and returns the frame itself', () => {
    const frame = hello({ ...helloPayload });
    const result = validateInbound(frame);
    expectValid(result);
    if (result.ok) {
      expect(result.message).to.equal(frame);
      expect(result.message.type).to.equal('hello');
    }
    expectValid(validateInbound(hello({ executor: 'extension', capabilities: {} })));
  });

  it('rejects hello with a bad capability, naming the exact field', () => {
    const frame = hello({ executor: 'runner', capabilities: { maxParallel: 0 } });
    expectOnly(validateInbound(frame), 'payload.capabilities.maxParallel', 'must be >= 1');
    expectOnly(
      validateInbound(hello({ executor: 'runner', capabilities: { maxParallel: 65 } })),
      'payload.capabilities.maxParallel',
      'must be <= 64',
    );
    expectOnly(
      validateInbound(hello({ executor: 'runner', capabilities: { eval: 'yes' } })),
      'payload.capabilities.eval',
      'must be a boolean',
    );
    expectOnly(
      validateInbound(hello({ executor: 'runner', capabilities: { video: true } })),
      'payload.capabilities.video',
      'unknown property',
    );
  });

  it('rejects hello without executor or capabilities, with a bad projectId, or with a sessionId', () => {
    expectOnly(validateInbound(hello({ capabilities: {} })), 'payload.executor', 'is required');
    expectOnly(validateInbound(hello({ executor: 'runner' })), 'payload.capabilities', 'is required');
    expectOnly(validateInbound(hello({ ...helloPayload, projectId: 'project-1' })), 'payload.projectId', '"prj_"');
    expectOnly(
      validateInbound(hello(helloPayload, { sessionId: SESSION })),
      'sessionId',
      'is not allowed in a hello frame',
    );
    expectOnly(validateInbound(envelope('hello')), 'payload', 'is required');
  });

  it('checks the envelope members', () => {
    expectOnly(validateInbound(hello(helloPayload, { otp: 'v1' })), 'otp', 'must be a version major.minor');
    expectValid(
      validateInbound(hello(helloPayload, { otp: '2.0' })),
      'another version is well-formed (the session answers E_VERSION)',
    );
    expectOnly(validateInbound(hello(helloPayload, { id: '42' })), 'id', '"msg_"');
    expectOnly(validateInbound(hello(helloPayload, { id: `msg_${'a'.repeat(65)}` })), 'id', '"msg_"');
    expectOnly(validateInbound(hello(helloPayload, { ts: '2024-05-01 12:00' })), 'ts', 'ISO 8601');
    expectOnly(validateInbound(hello(helloPayload, { extra: 1 })), 'extra', 'unknown property');
    const noId: Record<string, unknown> = hello(helloPayload);
    delete noId.id;
    expectOnly(validateInbound(noId), 'id', 'is required');
  });

  it('accepts pong and ack with or without an empty payload', () => {
    expectValid(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_ping1' })));
    expectValid(validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_ping1', payload: {} })));
    expectValid(validateInbound(envelope('ack', { sessionId: SESSION, ref: 'msg_start1', runId: RUN })));
    expectValid(validateInbound(envelope('ack', { sessionId: SESSION, ref: 'msg_rec1', payload: {} })));
  });

  it('rejects pong and ack without sessionId or ref, or with payload content', () => {
    expectOnly(validateInbound(envelope('pong', { ref: 'msg_ping1' })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('pong', { sessionId: SESSION })), 'ref', 'is required');
    expectOnly(
      validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_p', runId: RUN })),
      'runId',
      'is not allowed in a pong frame',
    );
    expectOnly(
      validateInbound(envelope('pong', { sessionId: SESSION, ref: 'msg_p', payload: { t: 1 } })),
      'payload.t',
      'unknown property',
    );
    expectOnly(validateInbound(envelope('ack', { ref: 'msg_start1' })), 'sessionId', 'is required');
    expectOnly(validateInbound(envelope('ack', { sessionId: SESSION })), 'ref', 'is required');
    expectOnly(validateInbound(envelope('ack', { sessionId: 'sess_1', ref: 'msg_a' })), 'sessionId', '"ots_"');
  });

  it('accepts and rejects error frames', () => {
    expectValid(
      validateInbound(
        envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL', message: 'browser crashed' } }),
      ),
    );
    expectValid(
      validateInbound(
        envelope('error', {
          sessionId: SESSION,
          ref: 'msg_x',
          runId: RUN,
          payload: { code: 'E_INTERNAL', message: 'm', details: { pid: 4 } },
        }),
      ),
    );
    expectOnly(
      validateInbound(envelope('error', { payload: { code: 'E_INTERNAL', message: 'm' } })),
      'sessionId',
      'is required',
    );
    expectOnly(
      validateInbound(envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL' } })),
      'payload.message',
      'is required',
    );
    expectOnly(
      validateInbound(
        envelope('error', { sessionId: SESSION, payload: { code: 'E_INTERNAL', message: 'm', stack: 's' } }),
      ),
      'payload.stack',
      'unknown property',
    );
  });

  it('accepts step.result, minimal and full', () => {
    expectValid(validateInbound(stepResult(report)));
    expectValid(
      validateInbound(
        stepResult({
          stepIndex: 0,
          status: 'pass',
          durationMs: 3,
          usedLocator: { by: 'role', value: 'link', name: 'Home', within: css('nav') },
        }),
      ),
    );
    for (const status of ['pass', 'fail', 'skip', 'error'])
      expectValid(validateInbound(stepResult({ stepIndex: 1, status })), status);
  });

  it('rejects step.result with a bad status, missing ids, or bad members', () => {
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'passed' })),
      'payload.status',
      'must be one of: pass, fail, skip, error',
    );
    expectOnly(validateInbound(stepResult({ status: 'pass' })), 'payload.stepIndex', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: -1, status: 'pass' })), 'payload.stepIndex', 'must be >= 0');
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'pass', screenshot: 'x' })),
      'payload.screenshot',
      'unknown property',
    );
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'fail', error: { code: 'E_TIMEOUT' } })),
      'payload.error.message',
      'is required',
    );
    expectOnly(
      validateInbound(
        stepResult({
          stepIndex: 0,
          status: 'fail',
          error: { code: 'E_X', message: 'm', triedLocators: [{ by: 'css' }] },
        }),
      ),
      'payload.error.triedLocators[0].value',
      'is required',
    );
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'pass', evidence: { screenshotAssetId: 'img_1' } })),
      'payload.evidence.screenshotAssetId',
      '"ast_"',
    );
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'pass', evidence: { consoleErrors: Array(101).fill('e') } })),
      'payload.evidence.consoleErrors',
      'at most 100 items',
    );
    expectOnly(
      validateInbound(stepResult({ stepIndex: 0, status: 'pass', actual: 'x'.repeat(100001) })),
      'payload.actual',
      'at most 100000 characters',
    );
    expectError(
      validateInbound(stepResult({ stepIndex: 0, status: 'pass', usedLocator: { candidates: [css('a')] } })),
      'payload.usedLocator.candidates',
      'unknown property',
    );
    const noSession = stepResult({ stepIndex: 0, status: 'pass' });
    delete noSession.sessionId;
    expectOnly(validateInbound(noSession), 'sessionId', 'is required');
    const noRun = stepResult({ stepIndex: 0, status: 'pass' });
    delete noRun.runId;
    expectOnly(validateInbound(noRun), 'runId', 'is required');
    const noRef = stepResult({ stepIndex: 0, status: 'pass' });
    delete noRef.ref;
    expectOnly(validateInbound(noRef), 'ref', 'is required');
    expectOnly(validateInbound(stepResult({ stepIndex: 0, status: 'pass' }, { runId: 'run_1' })), 'runId', '"otr_"');
  });

  it('accepts and rejects event.recorded', () => {
    const step = {
      otp: {
        action: 'type',
        locator: { candidates: [{ by: 'testid', value: 'email' }, css('#email')] },
        text: '{{secret_1}}',
      },
      label: 'Type e-mail',
    };
    expectValid(
      validateInbound(
        envelope('event.recorded', { sessionId: SESSION, payload: { recordingId: 'rec_1', step, at: TS } }),
      ),
    );
    expectValid(
      validateInbound(
        envelope('event.recorded', {
          sessionId: SESSION,
          payload: { step: { otp: { action: 'navigate', url: 'https://a.test/' } } },
        }),
      ),
    );
    expectOnly(validateInbound(envelope('event.recorded', { payload: { step } })), 'sessionId', 'is required');
    expectOnly(
      validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: {} })),
      'payload.step',
      'is required',
    );
    expectOnly(
      validateInbound(
        envelope('event.recorded', { sessionId: SESSION, payload: { step: { otp: { action: 'tap' } } } }),
      ),
      'payload.step.otp.action',
      'unknown action "tap"',
    );
    expectOnly(
      validateInbound(envelope('event.recorded', { sessionId: SESSION, payload: { step, at: 'now' } })),
      'payload.at',
      'ISO 8601',
    );
  });

  it('explains a frame that is not an object or has no usable type', () => {
    expectOnly(validateInbound(null), '(root)', 'must be a JSON object');
    expectOnly(validateInbound([envelope('pong')]), '(root)', 'must be a JSON object');
    expectOnly(validateInbound('hello'), '(root)', 'must be a JSON object');
    expectOnly(
      validateInbound({ otp: '1.0' }),
      'type',
      'is required; expected one of hello, pong, ack, error, step.result, event.recorded',
    );
    expectOnly(validateInbound({ type: 7 }), 'type', 'must be a string');
    expectOnly(validateInbound({ type: 'helo' }), 'type', 'unknown type "helo"; expected one of hello, pong');
    expectOnly(
      validateInbound({ type: 'step.exec' }),
      'type',
      '"step.exec" is sent by the service, not by the executor',
    );
    expectOnly(validateInbound({ type: '__proto__' }), 'type', 'unknown type "__proto__"');
  });
});

describe('Frames from the service: every outbound type validates and bad ones are caught', () => {
  const stepExec: StepExecPayload = {
    stepIndex: 0,
    timeoutMs: 30000,
    continueOnFail: false,
    evidence: 'onFail',
    label: 'Open',
    step: { action: 'navigate', url: 'https://a.test/login' },
  };
  const frames: Record<string, Record<string, unknown>> = {
    welcome: envelope('welcome', {
      ref: 'msg_hello1',
      sessionId: SESSION,
      payload: {
        sessionId: SESSION,
        serverTime: TS,
        keepaliveSec: 25,
        limits: { maxFrameBytes: 1048576, maxSteps: 500, stepTimeoutMs: 30000, maxParallel: 4, keepaliveSec: 25 },
      },
    }),
    ping: envelope('ping', { sessionId: SESSION }),
    'run.start': envelope('run.start', {
      sessionId: SESSION,
      runId: RUN,
      payload: {
        runId: RUN,
        vars: { base_url: 'https://a.test' },
        allowedOrigins: ['https://a.test'],
        testCases: [{ id: 'tc_1', title: 'Login', steps: 3 }],
        totalSteps: 3,
        defaults: { stepTimeoutMs: 30000 },
      },
    }),
    'step.exec': envelope('step.exec', { sessionId: SESSION, runId: RUN, payload: stepExec }),
    'run.cancel': envelope('run.cancel', { sessionId: SESSION, runId: RUN, payload: { runId: RUN, reason: 'asked' } }),
    reconnect: envelope('reconnect', {
      sessionId: SESSION,
      payload: { retryAfterMs: 3120, reason: 'service draining' },
    }),
    'run.finished': envelope('run.finished', {
      sessionId: SESSION,
      runId: RUN,
      payload: { runId: RUN, status: 'passed', passed: 3, failed: 0, skipped: 0, total: 3, durationMs: 1200 },
    }),
    'record.start': envelope('record.start', { sessionId: SESSION, payload: { recordingId: 'rec_1' } }),
    'record.stop': envelope('record.stop', { sessionId: SESSION, payload: { recordingId: 'rec_1' } }),
    ack: envelope('ack', { sessionId: SESSION, ref: 'msg_ev1' }),
    error: envelope('error', {
      ref: 'msg_bad',
      payload: { code: 'E_INVALID_FRAME', message: 'bad frame', details: { errors: [] } },
    }),
  };

  it('has an example for every outbound type', () => {
    expect(Object.keys(frames).sort()).to.deep.equal([...OUTBOUND_TYPES].sort());
  });

  for (const [type, frame] of Object.entries(frames)) {
    it(`accepts ${type}`, () => expectValid(validateOutbound(frame), type));
  }

  it('rejects bad service frames', () => {
    expectOnly(
      validateOutbound({ ...frames.reconnect!, payload: { retryAfterMs: -1 } }),
      'payload.retryAfterMs',
      'must be >= 0',
    );
    expectOnly(
      validateOutbound(envelope('welcome', { payload: frames.welcome!.payload as object })),
      'ref',
      'is required',
    );
    expectOnly(
      validateOutbound({
        ...frames['run.finished']!,
        payload: { ...(frames['run.finished']!.payload as object), status: 'pass' },
      }),
      'payload.status',
      'must be one of: passed, failed, cancelled, error',
    );
    expectOnly(
      validateOutbound({ ...frames['step.exec']!, payload: { ...stepExec, step: { action: 'navigate' } } }),
      'payload.step.url',
      'is required',
    );
    expectOnly(
      validateOutbound({
        ...frames['run.start']!,
        payload: { ...(frames['run.start']!.payload as object), vars: { n: 1 } },
      }),
      'payload.vars.n',
      'must be a string',
    );
    expectOnly(
      validateOutbound(envelope('error', { payload: { code: 'E_WHATEVER', message: 'm' } })),
      'payload.code',
      'must be one of: E_AUTH',
    );
    expectOnly(validateOutbound(envelope('ping')), 'sessionId', 'is required');
    expectOnly(validateOutbound({ type: 'pong' }), 'type', '"pong" is sent by the executor, not by the service');
  });
});
