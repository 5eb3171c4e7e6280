// The run machine alone: CPU per step of the XState actor with its effects answered at once (no
// sockets, no database). Usage: npx tsx benchmarks/machine.ts [runs] [steps per run] [trace]
// trace: `none` (default), `inspect` (each microstep's transitions collected through XState's
// `inspect`, as the driver did before) or `fast` (the same through fastInspection, as it does now).
// It prints wall time and CPU time (process.cpuUsage) per step; the CPU figure moves less when other
// work shares the machine. Either is the machine's share of a step; the engine's whole cost is in
// `npm run bench -- steps`.
import { createActor, type InspectionEvent } from 'xstate';
import { runMachine } from '../machines/run.machine.js';
import type { PlannedStep, StepReport } from '../machines/types.js';
import { TimerWheel } from '../src/otp/engine/timer-wheel.js';
import { fastInspection } from '../src/otp/engine/run-driver.js';

const runs = Number(process.argv[2] ?? 600);
const stepsPerRun = Number(process.argv[3] ?? 100);
const trace = process.argv[4] ?? 'none';
if (!['none', 'inspect', 'fast'].includes(trace)) throw new Error(`trace: none, inspect or fast, not ${trace}`);
let transitions = 0;
const traced = (event: InspectionEvent) => {
  if (event.type === '@xstate.microstep') transitions += event._transitions.length;
};
const steps: PlannedStep[] = Array.from({ length: stepsPerRun }, (_, i) => ({
  stepIndex: i,
  caseIndex: 0,
  action: { action: 'click', locator: { css: '#go' } },
  timeoutMs: 5_000,
  continueOnFail: false,
}));

// The engine's clock for the step time-outs (one wheel for every run).
const clock = new TimerWheel();

// As src/otp/engine/run-driver.ts does: one machine for every run, each actor's effects heard with
// `actor.on('*')`. The executor and the writes answer in a later microtask, as a socket or the
// database would in a later tick.
async function oneRun(runId: string): Promise<void> {
  const input = { runId, steps, capabilities: {}, vars: {}, graceMs: 1_000 };
  const actor = createActor(runMachine, { input, clock, ...(trace === 'none' ? {} : { inspect: traced }) });
  if (trace === 'fast' && !fastInspection(actor, traced)) throw new Error('fastInspection found nothing to replace');
  actor.on('*', (effect) => {
    switch (effect.type) {
      case 'sendStepExec': {
        const report = { stepIndex: effect.payload.stepIndex, status: 'pass' } as StepReport;
        return queueMicrotask(() => actor.send({ type: 'STEP_RESULT', report }));
      }
      case 'recordSteps':
        return queueMicrotask(() => actor.send({ type: 'STEPS_RECORDED' }));
      case 'finishRun':
        return queueMicrotask(() => actor.send({ type: 'RUN_FINISH_WRITTEN' }));
    }
  });
  const done = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  actor.start();
  await done;
}

await oneRun('warm-up');
const started = performance.now();
const cpuStarted = process.cpuUsage();
for (let r = 0; r < runs; r++) await oneRun(`r${r}`);
const us = ((performance.now() - started) * 1000) / (runs * stepsPerRun);
const cpu = process.cpuUsage(cpuStarted);
const cpuUs = (cpu.user + cpu.system) / (runs * stepsPerRun);
process.stdout.write(
  `run machine (trace ${trace}): ${us.toFixed(1)} µs per step, ${cpuUs.toFixed(1)} µs of CPU (${runs} runs of ${stepsPerRun} steps${trace === 'none' ? '' : `, ${transitions} transitions traced`})\n`,
);
