// The cheapest XState machine of the shape issue 14 fixes: it sequences one run's steps, one in
// flight, each with a time-out (a named delay) and each outcome written durably before the next
// step goes out (the write answered with an event, as the run machine's is). No skip rules, no
// outcomes kept, no cancel or executor states: what any run machine of this shape pays XState for a
// step, whatever its rules. benchmarks/machine.ts times it beside the real one (`floor`).
import { assign, emit, setup } from 'xstate';

export const floorMachine = setup({
  types: {
    context: {} as { cursor: number; steps: number },
    input: {} as { steps: number },
    events: {} as { type: 'STEP_RESULT' } | { type: 'STEPS_RECORDED' },
    emitted: {} as { type: 'sendStepExec'; stepIndex: number } | { type: 'recordSteps' } | { type: 'finishRun' },
  },
  actions: {
    sendStepExec: emit(({ context }) => ({ type: 'sendStepExec' as const, stepIndex: context.cursor })),
    recordSteps: emit({ type: 'recordSteps' as const }),
    finishRun: emit({ type: 'finishRun' as const }),
    next: assign({ cursor: ({ context }) => context.cursor + 1 }),
  },
  guards: {
    last: ({ context }) => context.cursor + 1 >= context.steps,
  },
  delays: { stepTimeout: 5_000 },
}).createMachine({
  id: 'floor',
  context: ({ input }) => ({ cursor: 0, steps: input.steps }),
  initial: 'running',
  states: {
    running: {
      entry: 'sendStepExec',
      after: { stepTimeout: 'done' },
      on: {
        STEP_RESULT: [
          { guard: 'last', target: 'done', actions: 'finishRun' },
          { target: 'recording', actions: 'next' },
        ],
      },
    },
    recording: {
      entry: 'recordSteps',
      on: { STEPS_RECORDED: 'running' },
    },
    done: { type: 'final' },
  },
});
