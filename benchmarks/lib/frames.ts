// The frames every scenario moves, shared by the simulated executors and the baseline servers so
// that the baselines carry the same bytes as the engine: a step.result in, a step.exec out.

/** Steps of the benchmark test cases: a realistic mix of UI actions (about 300-byte step.exec frames). */
export const SAMPLE_STEPS = [
  { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Submit order' } }, label: 'submit' },
  { otp: { action: 'type', locator: { by: 'label', value: 'Email address' }, text: 'ada@example.test' } },
  { otp: { action: 'navigate', url: 'https://shop.example.test/checkout/confirm' } },
  {
    otp: {
      action: 'assert',
      kind: 'text',
      locator: { by: 'testid', value: 'order-status' },
      op: 'contains',
      expected: 'Thank you',
    },
    label: 'confirmation shown',
  },
];

/** A test case body (POST /tests/cases) of `count` steps cycling through SAMPLE_STEPS. */
export function testCaseBody(title: string, count: number): { title: string; steps: unknown[] } {
  return { title, steps: Array.from({ length: count }, (_, i) => SAMPLE_STEPS[i % SAMPLE_STEPS.length]) };
}

let counter = 0;
const stem = Math.random().toString(36).slice(2, 8);
/** Message ids as an executor mints them (pattern msg_[A-Za-z0-9_-]{1,64}). */
export function msgId(): string {
  counter = (counter + 1) >>> 0;
  return `msg_${stem}${counter.toString(36)}`;
}

/** The step.result an executor sends for a passed step: the frame the baseline servers parse too. */
export function stepResultFrame(sessionId: string, runId: string, ref: string, stepIndex: number): string {
  return JSON.stringify({
    otp: '1.0',
    id: msgId(),
    ts: new Date().toISOString(),
    type: 'step.result',
    sessionId,
    runId,
    ref,
    payload: { stepIndex, status: 'pass', durationMs: 1 },
  });
}

/**
 * The step.exec a baseline server answers with: the same envelope and payload shape (and about the
 * same size) as the engine's step.exec for SAMPLE_STEPS[0].
 */
export function stepExecFrame(sessionId: string, runId: string, stepIndex: number): string {
  return JSON.stringify({
    otp: '1.0',
    id: msgId(),
    ts: new Date().toISOString(),
    type: 'step.exec',
    sessionId,
    runId,
    payload: {
      stepIndex,
      timeoutMs: 30000,
      continueOnFail: false,
      label: 'submit',
      step: SAMPLE_STEPS[0]!.otp,
    },
  });
}

/** What a baseline server does with one inbound frame: parse it, answer a step-sized frame. */
export function baselineAnswer(text: string): string {
  const frame = JSON.parse(text) as { sessionId?: string; runId?: string; payload?: { stepIndex?: number } };
  return stepExecFrame(
    frame.sessionId ?? 'ots_baseline',
    frame.runId ?? 'otr_baseline',
    (frame.payload?.stepIndex ?? 0) + 1,
  );
}
