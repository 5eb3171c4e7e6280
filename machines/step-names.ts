// How a step of a run is named for people, by every door (`otp run`, JUnit and CTRF, the console,
// triage, bug drafts, webhooks, the run machine's own messages): its number within its test case,
// counted from 1, and its case's title where the text does not name the case already, then the
// run-wide `stepIndex` (0-based, as the protocol and REST count) by which a program finds it.
// docs/decisions.md, "How a step is named".

export interface StepPlace {
  /** The step's index in its run, 0-based (step.exec, step.result and REST's stepIndex); none for a test case's step. */
  stepIndex?: number;
  /** Its number within its test case, counted from 1; unknown only where it was never kept. */
  position?: number;
  /** Its test case's title; left out where the text names the case already. */
  caseTitle?: string | null;
}

/**
 * "step 3 of “Checkout” (stepIndex 7)"; without the title, "step 3 (stepIndex 7)"; a test case's step
 * (no run), "step 3 of “Checkout”"; where its number in the case was never kept, "stepIndex 7 of
 * “Checkout”".
 */
export function stepName(place: StepPlace): string {
  const of = place.caseTitle ? ` of “${place.caseTitle}”` : '';
  if (place.position === undefined) return `stepIndex ${place.stepIndex ?? '?'}${of}`;
  const index = place.stepIndex === undefined ? '' : ` (stepIndex ${place.stepIndex})`;
  return `step ${place.position}${of}${index}`;
}

/**
 * Where a step is in its run: `steps` are the run's steps in order (each with its caseIndex; a case's
 * steps are consecutive), `titles` the run's test cases when the name should carry the title.
 */
export function stepPlace(
  steps: ReadonlyArray<{ stepIndex: number; caseIndex: number }>,
  stepIndex: number,
  titles?: ReadonlyArray<{ title?: string | null }>,
): StepPlace {
  const caseIndex = (
    steps[stepIndex]?.stepIndex === stepIndex ? steps[stepIndex] : steps.find((s) => s.stepIndex === stepIndex)
  )?.caseIndex;
  const first = steps.findIndex((s) => s.caseIndex === caseIndex);
  const position = first < 0 ? stepIndex + 1 : stepIndex - steps[first]!.stepIndex + 1;
  const caseTitle = caseIndex === undefined ? undefined : titles?.[caseIndex]?.title;
  return { stepIndex, position, ...(caseTitle ? { caseTitle } : {}) };
}
