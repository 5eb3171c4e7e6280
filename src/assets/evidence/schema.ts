// Schemas of OTP evidence: the upload form, its answer, and the files a run's step lists.
import type { FromSchema } from 'json-schema-to-ts';
import { registerSchema } from '../../rest/schemas.js';
import { filePart } from '../upload/form.js';

export const EVIDENCE_KINDS = ['screenshot', 'video', 'trace', 'dom', 'har', 'log', 'other'] as const;

export const evidenceFormSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['file', 'runId', 'stepIndex', 'kind'],
  properties: {
    file: filePart('The evidence file (multipart part named "file")'),
    runId: { type: 'string', pattern: '^otr_[a-z0-9]+$', description: "A run of the caller's project" },
    stepIndex: { type: 'integer', minimum: 0, description: 'The step of the run the evidence belongs to' },
    kind: { enum: [...EVIDENCE_KINDS], description: 'What the file shows' },
  },
};

export const EvidenceUploadSchema = registerSchema({
  $id: 'EvidenceUpload',
  title: 'EvidenceUpload',
  description: 'Evidence stored in the otp-evidence bucket for a step of a run',
  type: 'object',
  additionalProperties: false,
  required: ['assetId', 'runId', 'stepIndex', 'kind', 'size', 'sha256'],
  properties: {
    assetId: {
      type: 'string',
      pattern: '^ast_',
      description: 'Send it as evidence.screenshotAssetId in the step.result; GET /api/v1/assets/items/{id} reads it',
    },
    runId: { type: 'string', pattern: '^otr_' },
    stepIndex: { type: 'integer', minimum: 0 },
    kind: { enum: [...EVIDENCE_KINDS] },
    size: { type: 'integer', minimum: 0, description: 'Bytes' },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
});

/** An evidence file as a run's step lists it; its type is derived from it (EvidenceFile). */
export const evidenceFile = {
  $id: 'EvidenceFile',
  title: 'EvidenceFile',
  description: "An evidence file uploaded for a step, as a run lists it under the step's evidence.files",
  type: 'object',
  additionalProperties: false,
  required: ['assetId', 'kind', 'name', 'contentType', 'size', 'downloadUrl'],
  properties: {
    assetId: { type: 'string', pattern: '^ast_' },
    kind: { enum: [...EVIDENCE_KINDS, null] },
    name: { type: 'string' },
    contentType: { type: 'string' },
    size: { type: 'integer', minimum: 0 },
    downloadUrl: { type: 'string', description: 'Path on this service that answers a signed link (302)' },
  },
} as const;
export type EvidenceFile = FromSchema<typeof evidenceFile>;

export const EvidenceFileSchema = registerSchema(evidenceFile);
