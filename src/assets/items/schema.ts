// Schemas of the asset resource: request validation, /openapi.json and tool input. Upload forms are
// multipart: their text fields are described (and checked) by the form schemas; the file travels in
// the part named "file".
import type { BodyOf, QueryOf } from '../../rest/route.js';
import { pageSchema, registerSchema, revision } from '../../rest/schemas.js';
import { present } from '../../validation/present.js';
import { EVIDENCE_KINDS } from '../evidence/schema.js';
import { filePart } from '../upload/form.js';

export const visibility = {
  enum: ['private', 'public'],
  description:
    'public: anyone may read it at /api/v1/assets/public/:id without a key; private (default): only through signed links',
} as const;

export const assetUploadFormSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    file: filePart('The file (multipart part named "file"); its part Content-Type is recorded as the asset\'s type'),
    visibility,
  },
  required: ['file'],
};

const assetUpdate = {
  $id: 'AssetUpdate',
  title: 'AssetUpdate',
  description: 'Changes to an asset: only its visibility changes',
  type: 'object',
  additionalProperties: false,
  required: ['visibility'],
  properties: { visibility },
} as const;
export const AssetUpdateSchema = registerSchema(assetUpdate);
export type AssetUpdate = BodyOf<typeof assetUpdate>;

/** Query of a signed link (GET /assets/signed/:id): checked by the asset service, not by the schema. */
export const signedLinkQuery = {
  type: 'object',
  properties: {
    exp: { type: 'string', description: 'Expiry (Unix seconds), as signed' },
    sig: { type: 'string', description: 'Signature of the link' },
  },
} as const;
export type SignedLinkQuery = QueryOf<typeof signedLinkQuery>;

const assetId = { type: 'string', pattern: '^ast_' };
const dateTime = { type: 'string', format: 'date-time' };
const evidenceOf = {
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'stepIndex', 'kind'],
  properties: {
    runId: { type: 'string', pattern: '^otr_' },
    stepIndex: { type: 'integer', minimum: 0 },
    kind: { enum: [...EVIDENCE_KINDS] },
  },
  description: 'The OTP run step this evidence was uploaded for',
};

export const AssetSchema = registerSchema({
  $id: 'Asset',
  title: 'Asset',
  description: 'Metadata of a stored file; its bytes are behind downloadUrl (and publicUrl when public)',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'projectId',
    'bucketId',
    'bucket',
    'name',
    'size',
    'contentType',
    'sha256',
    'visibility',
    'storageProvider',
    'version',
    'createdAt',
    'createdBy',
    'downloadUrl',
  ],
  properties: {
    id: assetId,
    projectId: { type: 'string' },
    bucketId: { type: 'string', pattern: '^bkt_' },
    bucket: { type: 'string', description: 'Name of the bucket' },
    name: { type: 'string', description: "The client's file name (display only; never a storage path)" },
    size: { type: 'integer', minimum: 0, description: 'Bytes' },
    contentType: { type: 'string' },
    sha256: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description: 'Hex SHA-256 of the bytes; the ETag of its downloads',
    },
    visibility,
    storageProvider: {
      enum: ['fs', 's3'],
      description: 'The driver that holds the bytes (set at upload, never changed)',
    },
    version: revision,
    createdAt: dateTime,
    createdBy: {
      type: ['string', 'null'],
      description: 'Id of the API key that uploaded it (null when the service wrote it)',
    },
    downloadUrl: {
      type: 'string',
      description: 'Path on this service that answers a signed link (302), for a key with read scope',
    },
    publicUrl: {
      type: 'string',
      description: 'Path on this service that serves the bytes without a key; present only while public',
    },
    evidence: evidenceOf,
    archivedFrom: {
      type: 'object',
      additionalProperties: false,
      required: ['assetId', 'bucketId', 'bucket', 'visibility', 'createdAt', 'createdBy', 'deletedBy', 'deletedAt'],
      properties: {
        assetId,
        bucketId: { type: 'string', pattern: '^bkt_' },
        bucket: { type: 'string' },
        visibility,
        createdAt: dateTime,
        createdBy: { type: ['string', 'null'] },
        evidence: evidenceOf,
        deletedBy: { type: 'string', description: 'Id of the API key that deleted it' },
        deletedAt: dateTime,
      },
      description: 'Copies in the _deletion bucket: the asset they were, where it was and who deleted it when',
    },
  },
  if: { properties: { visibility: { const: 'public' } } },
  then: present('publicUrl'),
  else: { not: present('publicUrl') },
});

export const AssetPageSchema = pageSchema('AssetPage', AssetSchema, 'A page of assets, oldest first');

export const AssetDeletionSchema = registerSchema({
  $id: 'AssetDeletion',
  title: 'AssetDeletion',
  description:
    'A deleted asset and the copy archived in _deletion (null when the deleted asset was itself such a copy)',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deleted', 'archive'],
  properties: {
    id: assetId,
    deleted: { const: true },
    archive: { oneOf: [AssetSchema, { type: 'null' }] },
  },
});

export const AssetUsageSchema = registerSchema({
  $id: 'AssetUsage',
  title: 'AssetUsage',
  description: "Storage used by the project against its tier's quota (copies in _deletion do not count)",
  type: 'object',
  additionalProperties: false,
  required: ['tier', 'quotaBytes', 'usedBytes', 'freeBytes', 'maxUploadBytes'],
  properties: {
    tier: { type: 'string' },
    quotaBytes: { type: 'integer', minimum: 0, description: 'Bytes the project may keep' },
    usedBytes: { type: 'integer', minimum: 0 },
    freeBytes: { type: 'integer', minimum: 0, description: 'quotaBytes - usedBytes, never below 0' },
    maxUploadBytes: {
      type: 'integer',
      minimum: 1,
      description: 'Largest single upload the service takes (MAX_UPLOAD_BYTES)',
    },
  },
});
