// How triage did on a labelled set: per category precision and recall, the confusion matrix (rows:
// the label, columns: the answer) and the calibration (per confidence band, how often the category
// was right). Printed by the labelled sets in test/slow/ and copied into docs/ai.md.
import { TRIAGE_CATEGORIES, type TriageCategory } from '../../src/ai/schemas.js';

export type Label = TriageCategory | 'none';

export interface Scored {
  night: number;
  name: string;
  truth: Label;
  predicted: Label;
  confidence: number;
  reasons: string[];
}

export interface CategoryFigures {
  category: TriageCategory;
  truth: number;
  predicted: number;
  correct: number;
  precision: number;
  recall: number;
}

export function figuresOf(results: readonly Scored[]): CategoryFigures[] {
  return TRIAGE_CATEGORIES.map((category) => {
    const correct = results.filter((r) => r.truth === category && r.predicted === category).length;
    const predicted = results.filter((r) => r.predicted === category).length;
    const truth = results.filter((r) => r.truth === category).length;
    return {
      category,
      truth,
      predicted,
      correct,
      precision: predicted ? correct / predicted : Number.NaN,
      recall: truth ? correct / truth : Number.NaN,
    };
  });
}

const LABELS: Label[] = [...TRIAGE_CATEGORIES, 'none'];
export const BANDS = [
  { name: '≥ 0.9', from: 0.9, to: 1.01 },
  { name: '0.8 to 0.9', from: 0.8, to: 0.9 },
  { name: '0.6 to 0.8', from: 0.6, to: 0.8 },
  { name: '< 0.6 (uncertain)', from: 0, to: 0.6 },
] as const;

export function calibrationOf(results: readonly Scored[]) {
  const answered = results.filter((r) => r.predicted !== 'none');
  return BANDS.map((band) => {
    const inBand = answered.filter((r) => r.confidence >= band.from && r.confidence < band.to);
    const right = inBand.filter((r) => r.truth === r.predicted).length;
    return { band: band.name, answers: inBand.length, right };
  });
}

/** The report in Markdown: figures, confusion matrix, calibration, then every miss. */
export function report(title: string, results: readonly Scored[]): string {
  const figures = figuresOf(results);
  const matrix = LABELS.filter(
    (l) => l !== 'none' || results.some((r) => r.truth === 'none' || r.predicted === 'none'),
  );
  return [
    title,
    '',
    '| Category | Labelled | Predicted | Correct | Precision | Recall |',
    '|---|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.category} | ${f.truth} | ${f.predicted} | ${f.correct} | ${f.precision.toFixed(2)} | ${f.recall.toFixed(2)} |`,
    ),
    '',
    `| Labelled \\ triaged | ${matrix.join(' | ')} |`,
    `|---|${matrix.map(() => '---').join('|')}|`,
    ...matrix.map(
      (truth) =>
        `| ${truth} | ${matrix.map((p) => results.filter((r) => r.truth === truth && r.predicted === p).length).join(' | ')} |`,
    ),
    '',
    '| Confidence | Answers | Right | Share right |',
    '|---|---|---|---|',
    ...calibrationOf(results).map(
      (c) => `| ${c.band} | ${c.answers} | ${c.right} | ${c.answers ? (c.right / c.answers).toFixed(2) : '-'} |`,
    ),
    '',
    ...results
      .filter((r) => r.truth !== r.predicted)
      .map(
        (w) =>
          `missed: night ${w.night} ${w.name}: labelled ${w.truth}, triaged ${w.predicted} (${w.reasons[0] ?? ''})`,
      ),
  ].join('\n');
}
