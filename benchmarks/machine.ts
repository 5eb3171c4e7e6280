// The run machine alone: CPU per step of the XState actor with its effects answered at once (no
// sockets, no database). Usage: npx tsx benchmarks/machine.ts [runs] [steps per run]
// The figure is the machine's share of a step; the engine's whole cost is in `npm run bench -- steps`.
import { createActor, fromPromise } from 'xstate';
import { runMachine } from '../machines/run.machine.js';
import type { PlannedStep, StepReport } from '../machines/types.js';

const runs = Number(process.argv[2] ?? 600);
const stepsPerRun = Number(process.argv[3] ?? 100);
const steps: PlannedStep[] = Array.from({ length: stepsPerRun }, (_, i) => ({
  stepIndex: i,
  caseIndex: 0,
  action: { action: 'click', locator: { css: '#go' } },
  timeoutMs: 5_000,
  continueOnFail: false,
}));

// Provided once, as src/otp/engine/run-driver.ts does; the runs go one after another, so the effects
// answer the current one.
let current!: ReturnType<typeof createActor<typeof runMachine>>;
const machine = runMachine.provide({
  actions: {
    // The executor answers each step in a later microtask, as a socket would in a later tick.
    sendStepExec: (_, { stepIndex }) =>
      queueMicrotask(() => current.send({ type: 'STEP_RESULT', report: { stepIndex, status: 'pass' } as StepReport })),
    recordSteps: () => queueMicrotask(() => current.send({ type: 'STEPS_RECORDED' })),
  },
  actors: { finishRun: fromPromise(async () => {}) },
});

async function oneRun(runId: string): Promise<void> {
  current = createActor(machine, { input: { runId, steps, capabilities: {}, vars: {}, graceMs: 1_000 } });
  const actor = current;
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  await done;
}

await oneRun('warm-up');
const started = performance.now();
for (let r = 0; r < runs; r++) await oneRun(`r${r}`);
const us = ((performance.now() - started) * 1000) / (runs * stepsPerRun);
process.stdout.write(`run machine: ${us.toFixed(1)} µs per step (${runs} runs of ${stepsPerRun} steps)\n`);
