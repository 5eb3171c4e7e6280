// What the run machine says it sends: the frames each of its transitions sends to the executor, read
// from the machine's own definition (the actions of the transition, then the entry actions of the
// state it enters). The driver records them in the run's trace (otp/engine/run-tracer.ts), and the
// console's time line reads them there: nobody restates when a frame goes out.
import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { runMachine } from './run.machine.js';

/** The effects that send a frame, and the frame each one sends (otp/engine/run-driver.ts carries them out). */
export const FRAME_OF_EFFECT = {
  sendRunStart: 'run.start',
  sendStepExec: 'step.exec',
  sendRunCancel: 'run.cancel',
  sendRunFinished: 'run.finished',
} as const;

export type SentFrame = (typeof FRAME_OF_EFFECT)[keyof typeof FRAME_OF_EFFECT];

type ActionOf = AnyStateNode['entry'][number];

function frameOf(action: ActionOf): SentFrame | undefined {
  const name = typeof action === 'string' ? action : typeof action === 'object' && action ? action.type : undefined;
  return name && Object.hasOwn(FRAME_OF_EFFECT, name)
    ? FRAME_OF_EFFECT[name as keyof typeof FRAME_OF_EFFECT]
    : undefined;
}

function framesOf(actions: readonly ActionOf[]): SentFrame[] {
  return actions.flatMap((action) => frameOf(action) ?? []);
}

/** The frames a transition sends: its own actions', then those of the entry of the state it enters. */
export function framesSentBy(transition: AnyTransitionDefinition): SentFrame[] {
  const entered = transition.target?.[0];
  const entry = entered && (entered !== transition.source || transition.reenter) ? entered.entry : [];
  return framesOf([...transition.actions, ...entry]);
}

/** The frames the run's start sends: the machine's own entry actions, then its initial state's. */
export function framesSentAtStart(): SentFrame[] {
  const initial = runMachine.root.initial?.target[0];
  return framesOf([...runMachine.root.entry, ...(initial?.entry ?? [])]);
}
