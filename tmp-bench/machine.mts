import { createActor, fromPromise } from 'xstate';
import { runMachine } from '../machines/run.machine.ts';
const N = 100, RUNS = 300;
const steps = Array.from({ length: N }, (_, i) => ({ stepIndex: i, caseIndex: 0, action: { action: 'click', selector: '#a' } as any, timeoutMs: 5000, continueOnFail: false }));
let sendExec: ((i: number) => void) | undefined;
const m = runMachine.provide({
  actions: { sendStepExec: (_: any, p: any) => sendExec!(p.stepIndex) },
  actors: { recordSteps: fromPromise(async () => {}), finishRun: fromPromise(async () => {}) },
});
const t0 = performance.now();
for (let r = 0; r < RUNS; r++) {
  const actor = createActor(m, { input: { runId: 'r' + r, steps, capabilities: {}, vars: {}, graceMs: 1000 } });
  const done = new Promise((res) => actor.subscribe({ complete: res }));
  sendExec = (i) => { queueMicrotask(() => actor.send({ type: 'STEP_RESULT', report: { stepIndex: i, status: 'pass', durationMs: 1 } as any })); };
  actor.start();
  await done;
}
const us = ((performance.now() - t0) * 1000) / (N * RUNS);
console.log(`${us.toFixed(1)} µs per step`);
