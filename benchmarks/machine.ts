// A step machine alone: CPU per step of the XState actor with its effects answered at once (no
// sockets, no database). Usage: npx tsx benchmarks/machine.ts [runs] [steps per run] [trace] [machine] [--json]
// trace: `none` (default), `inspect` (each microstep's transitions collected through XState's
// `inspect`, as the driver did before) or `fast` (the same through fastInspection, as it does now).
// machine: `run` (default, machines/run.machine.ts) or `floor` (lib/floor-machine.ts: the cheapest
// machine of the same shape, the XState share any run machine would pay). It prints wall time and
// CPU time (process.cpuUsage) per step, or with --json {"machine", "trace", "wallUs", "cpuUs"}; the
// CPU figure moves less when other work shares the machine. Either is the machine's share of a step;
// the engine's whole cost is in `npm run bench -- steps`, which runs this too (the shape's floor).
import { createActor, type InspectionEvent } from 'xstate';
import { runMachine } from '../machines/run.machine.js';
import type { PlannedStep, StepReport } from '../machines/types.js';
import { TimerWheel } from '../src/otp/engine/timer-wheel.js';
import { fastInspection, transitionsOf } from '../src/otp/engine/xstate-adapter.js';
import { floorMachine } from './lib/floor-machine.js';

const json = process.argv.includes('--json');
const [runsArg, stepsArg, traceArg, machineArg] = process.argv.slice(2).filter((arg) => arg !== '--json');
const runs = Number(runsArg ?? 600);
const stepsPerRun = Number(stepsArg ?? 100);
const trace = traceArg ?? 'none';
const machine = machineArg ?? 'run';
if (!['none', 'inspect', 'fast'].includes(trace)) throw new Error(`trace: none, inspect or fast, not ${trace}`);
if (!['run', 'floor'].includes(machine)) throw new Error(`machine: run or floor, not ${machine}`);
let transitions = 0;
const traced = (event: InspectionEvent) => {
  if (event.type === '@xstate.microstep') transitions += transitionsOf(event).length;
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

type Effect = { type: string; payload?: { stepIndex: number }; stepIndex?: number };
/** What this loop needs of either machine's actor. */
interface StepActor {
  system: unknown;
  send(event: { type: string; report?: StepReport }): void;
  on(type: '*', handler: (effect: Effect) => void): unknown;
  subscribe(observer: { complete(): void }): unknown;
  start(): unknown;
}

function createRun(runId: string): StepActor {
  const options = { clock, ...(trace === 'none' ? {} : { inspect: traced }) };
  const actor =
    machine === 'floor'
      ? createActor(floorMachine, { ...options, input: { steps: stepsPerRun } })
      : createActor(runMachine, { ...options, input: { runId, steps, capabilities: {}, vars: {}, graceMs: 1_000 } });
  return actor as unknown as StepActor;
}

// As src/otp/engine/run-driver.ts does: one machine for every run, each actor's effects heard with
// `actor.on('*')`. The executor and the writes answer in a later microtask, as a socket or the
// database would in a later tick.
async function oneRun(runId: string): Promise<void> {
  const actor = createRun(runId);
  if (trace === 'fast' && !fastInspection(actor, traced)) throw new Error('fastInspection found nothing to replace');
  const send = actor.send.bind(actor);
  actor.on('*', (effect) => {
    switch (effect.type) {
      case 'sendStepExec': {
        const report = { stepIndex: effect.payload?.stepIndex ?? effect.stepIndex, status: 'pass' } as StepReport;
        return queueMicrotask(() => send({ type: 'STEP_RESULT', report }));
      }
      case 'recordSteps':
        return queueMicrotask(() => send({ type: 'STEPS_RECORDED' }));
      case 'finishRun':
        return queueMicrotask(() => send({ type: 'RUN_FINISH_WRITTEN' }));
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
const wallUs = ((performance.now() - started) * 1000) / (runs * stepsPerRun);
const cpu = process.cpuUsage(cpuStarted);
const cpuUs = (cpu.user + cpu.system) / (runs * stepsPerRun);
process.stdout.write(
  json
    ? `${JSON.stringify({ machine, trace, wallUs, cpuUs })}\n`
    : `${machine} machine (trace ${trace}): ${wallUs.toFixed(1)} µs per step, ${cpuUs.toFixed(1)} µs of CPU (${runs} runs of ${stepsPerRun} steps${trace === 'none' ? '' : `, ${transitions} transitions traced`})\n`,
);
