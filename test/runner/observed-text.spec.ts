// The cleaning of observed text that otp-runner applies to every step.result before sending it (and
// the service to every one it receives): NUL and lone surrogates become U+FFFD in actual,
// error.message and console errors, the fields are named in textReplaced, and nothing else changes.
import { expect } from 'chai';
import { cleanObservedText, replacedText } from '../../src/otp/protocol/observed-text.js';
import type { StepResultPayload } from '../../src/otp/protocol/schemas/messages.js';
import { validateInbound } from '../../src/otp/protocol/validators.js';

describe('observed text cleaned before it is sent (otp-runner) or stored (service)', () => {
  it('replaces NUL, a lone high and a lone low surrogate, and leaves pairs and ordinary text alone', () => {
    expect(replacedText('a\u0000b')).to.equal('a\ufffdb');
    expect(replacedText('x\ud800')).to.equal('x\ufffd');
    expect(replacedText('\udc00y')).to.equal('\ufffdy');
    expect(replacedText('\u0000\ud83d\ude00\ud83d')).to.equal('\ufffd\u{1F600}\ufffd');
    expect(replacedText('\u{1F600} and é')).to.equal(undefined);
    expect(replacedText('plain')).to.equal(undefined);
    expect(replacedText('')).to.equal(undefined);
  });

  it('cleans actual, error.message and every console error, names them in order, and keeps the rest as it was', () => {
    const payload: StepResultPayload = {
      stepIndex: 3,
      status: 'fail',
      durationMs: 12,
      error: {
        code: 'E_ASSERT_FAILED',
        message: 'expected "ok", got "\u0000"',
        triedLocators: [{ by: 'testid', value: 'x', count: 0 }],
      },
      evidence: { consoleErrors: ['fine', 'cut \ud83d', 'also fine'], screenshotAssetId: 'ast_1' },
      actual: 'a\u0000b',
      usedLocator: { by: 'testid', value: 'x' },
    };
    cleanObservedText(payload);
    expect(payload).to.deep.equal({
      stepIndex: 3,
      status: 'fail',
      durationMs: 12,
      error: {
        code: 'E_ASSERT_FAILED',
        message: 'expected "ok", got "\ufffd"',
        triedLocators: [{ by: 'testid', value: 'x', count: 0 }],
      },
      evidence: { consoleErrors: ['fine', 'cut \ufffd', 'also fine'], screenshotAssetId: 'ast_1' },
      actual: 'a\ufffdb',
      usedLocator: { by: 'testid', value: 'x' },
      textReplaced: ['actual', 'error.message', 'evidence.consoleErrors'],
    });
  });

  it('adds nothing to a clean result, and keeps what the executor already named', () => {
    const clean: StepResultPayload = { stepIndex: 0, status: 'pass', actual: 'ok', evidence: { consoleErrors: ['x'] } };
    cleanObservedText(clean);
    expect(clean).to.deep.equal({ stepIndex: 0, status: 'pass', actual: 'ok', evidence: { consoleErrors: ['x'] } });

    const named: StepResultPayload = {
      stepIndex: 1,
      status: 'pass',
      actual: '\ud800',
      textReplaced: ['evidence.consoleErrors'],
    };
    cleanObservedText(named);
    expect(named.textReplaced).to.deep.equal(['actual', 'evidence.consoleErrors']);
    const already: StepResultPayload = { stepIndex: 2, status: 'pass', actual: '\ufffd', textReplaced: ['actual'] };
    cleanObservedText(already);
    expect(already.textReplaced).to.deep.equal(['actual']);
  });

  it('gives a frame the service accepts: what the runner sends passes the inbound check unchanged', () => {
    const payload: StepResultPayload = {
      stepIndex: 0,
      status: 'fail',
      error: { code: 'E_ASSERT_FAILED', message: 'got "\u0000"' },
      actual: '\udfff',
    };
    cleanObservedText(payload);
    const text = JSON.stringify({
      otp: '1.0',
      id: 'msg_1',
      ts: new Date().toISOString(),
      type: 'step.result',
      sessionId: 'ots_1',
      runId: 'otr_1',
      ref: 'msg_0',
      payload,
    });
    const checked = validateInbound(JSON.parse(text), text);
    expect(checked.ok).to.equal(true);
    expect(JSON.parse(text).payload).to.deep.equal(payload);
  });
});
