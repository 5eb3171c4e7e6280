export const EVIDENCE_KINDS = ['screenshot', 'video', 'trace', 'dom', 'har', 'log', 'other'] as const;

export const evidenceFormSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['file', 'runId', 'stepIndex', 'kind'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'The evidence file (multipart part named "file")' },
    runId: { type: 'string', pattern: '^otr_[a-z0-9]+$', description: 'A run of the caller\'s project' },
    stepIndex: { type: 'integer', minimum: 0, description: 'The step of the run the evidence belongs to' },
    kind: { enum: [...EVIDENCE_KINDS], description: 'What the file shows' },
  },
};
