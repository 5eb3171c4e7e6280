import { expect } from 'chai';
import { buildFrame, frameTemplate, isoAt } from '../../src/otp/protocol/frames.js';
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
    expect(fromTemplate.replace(/"id":"[^"]+","ts":"[^"]+"/, '')).to.equal(
      built.replace(/"id":"[^"]+","ts":"[^"]+"/, ''),
    );
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

describe('isoAt (times as ISO strings, the second reused)', () => {
  it('gives what Date#toISOString gives, across milliseconds, seconds, days and back in time', () => {
    const base = Date.UTC(2026, 10, 23, 23, 59, 59, 990);
    // In order, then jumping about: the same millisecond twice, the next second, the next day, back.
    const offsets = [0, 0, 5, 9, 10, 11, 99, 100, 1000, 1009, -990, -991, 86_400_000, 3, 1, 2_000, 999, 1_000];
    for (let i = 0; i < 2_000; i++) offsets.push(Math.floor((i * 7919) % 4_000) - 2_000);
    const wrong = offsets.map((d) => base + d).filter((ms) => isoAt(ms) !== new Date(ms).toISOString());
    expect(wrong).to.deep.equal([]);
    expect(isoAt(0)).to.equal('1970-01-01T00:00:00.000Z');
    expect(isoAt(1_000.5)).to.equal(new Date(1_000.5).toISOString());
  });
});
