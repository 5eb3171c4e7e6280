import { expect } from 'chai';
import { buildFrame, frameTemplate } from '../../src/otp/protocol/frames.js';
import { validateOutbound } from '../../src/otp/protocol/validators.js';

describe('frameTemplate (step.exec frames made from a per-run template)', () => {
  const fields = { sessionId: 'ots_01JC0000000000000000000000', runId: 'otr_01JC0000000000000000000000' };
  const payload = {
    stepIndex: 3,
    timeoutMs: 5000,
    continueOnFail: false,
    step: { action: 'type', locator: { by: 'css', value: 'input[name="q"]' }, text: 'a "quoted" \\ value\n' },
    label: 'Type the "query"',
  };

  it('makes the text buildFrame makes, but for the id and time', () => {
    const fromTemplate = frameTemplate('step.exec', fields)(payload);
    const built = buildFrame('step.exec', fields, payload);
    const a = JSON.parse(fromTemplate);
    const b = JSON.parse(built);
    expect(Object.keys(a)).to.deep.equal(Object.keys(b));
    expect({ ...a, id: 'x', ts: 'x' }).to.deep.equal({ ...b, id: 'x', ts: 'x' });
    expect(fromTemplate.replace(/"id":"[^"]+","ts":"[^"]+"/, '')).to.equal(built.replace(/"id":"[^"]+","ts":"[^"]+"/, ''));
  });

  it('gives every frame its own message id and a current time, valid as a step.exec', () => {
    const frame = frameTemplate('step.exec', fields);
    const before = Date.now();
    const [first, second] = [JSON.parse(frame(payload)), JSON.parse(frame(payload))];
    expect(first.id).to.match(/^msg_/);
    expect(first.id).to.not.equal(second.id);
    expect(Date.parse(first.ts)).to.be.within(before, Date.now());
    expect(validateOutbound(first)).to.deep.include({ ok: true });
  });
});
