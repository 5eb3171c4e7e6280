// Schemas of the recording routes (docs/recording.md): what they take and what they answer.
import { pageSchema, registerSchema } from '../../rest/schemas.js';
import { MAX_TEST_CASE_STEPS } from '../protocol/schemas/index.js';

const nullableTime = { type: ['string', 'null'], format: 'date-time' };

export const RecordingStartSchema = registerSchema({
  $id: 'OtpRecordingStart',
  title: 'OtpRecordingStart',
  description: 'A recording to start on a connected executor session (both members optional)',
  type: 'object',
  additionalProperties: false,
  properties: {
    title: {
      type: 'string',
      minLength: 1,
      maxLength: 300,
      description: 'Title of the recording and of the test case it becomes',
    },
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'Page the executor opens first (sent in record.start)',
    },
  },
});

const recordingProperties = {
  id: { type: 'string', pattern: '^rec_' },
  recordingId: { type: 'string', pattern: '^rec_', description: 'Same as id' },
  projectId: { type: 'string' },
  sessionId: { type: 'string', pattern: '^ots_', description: 'The executor session that records' },
  title: { type: 'string' },
  startUrl: { type: ['string', 'null'] },
  startedBy: {
    enum: ['executor', 'request'],
    description: 'Who started it: the executor (record.start) or a REST caller',
  },
  status: { enum: ['recording', 'stopped'] },
  eventCount: { type: 'integer', description: 'Steps recorded so far' },
  testCaseId: {
    type: ['string', 'null'],
    description: 'The test case made when it stopped (null while recording, or when it recorded no step)',
  },
  stopReason: { type: ['string', 'null'], description: 'Who or what stopped it' },
  createdAt: { type: 'string', format: 'date-time' },
  stoppedAt: nullableTime,
} as const;
const recordingRequired = Object.keys(recordingProperties);

export const RecordingSummarySchema = registerSchema({
  $id: 'OtpRecordingSummary',
  title: 'OtpRecordingSummary',
  description: 'A recording without its events',
  type: 'object',
  additionalProperties: false,
  required: recordingRequired,
  properties: recordingProperties,
});

export const RecordingSchema = registerSchema({
  $id: 'OtpRecording',
  title: 'OtpRecording',
  description: 'A recording and every step stored so far, in the order the executor sent them',
  type: 'object',
  additionalProperties: false,
  required: [...recordingRequired, 'events'],
  properties: {
    ...recordingProperties,
    events: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['seq', 'step', 'at', 'receivedAt'],
        properties: {
          seq: { type: 'integer', minimum: 1, description: 'Position in the recording, from 1' },
          step: { $ref: 'TestCaseStep', description: 'The recorded step; sensitive text as {{secret_N}}' },
          at: { ...nullableTime, description: 'When the user acted, as the executor said' },
          receivedAt: { type: 'string', format: 'date-time', description: 'When the service stored it' },
        },
      },
    },
  },
});

export const RecordingPageSchema = pageSchema('OtpRecordingPage', RecordingSummarySchema, 'A page of recordings');

export const RecordingImportSchema = registerSchema({
  $id: 'OtpRecordingImport',
  title: 'OtpRecordingImport',
  description: "A finished recording in this service's own format: a title and test case steps",
  type: 'object',
  additionalProperties: false,
  required: ['title', 'steps'],
  properties: {
    format: { const: 'otp', description: 'Optional marker of this format' },
    title: { type: 'string', minLength: 1, maxLength: 300 },
    description: { type: 'string', maxLength: 20000 },
    startUrl: { type: 'string', maxLength: 2000, description: 'Kept in the description of the test case' },
    labels: {
      type: 'array',
      maxItems: 50,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 50 },
      description: 'Labels of the test case (default ["recorded"])',
    },
    steps: { type: 'array', minItems: 1, maxItems: MAX_TEST_CASE_STEPS, items: { $ref: 'TestCaseStep' } },
  },
});

export const ChromeRecordingSchema = registerSchema({
  $id: 'ChromeDevToolsRecording',
  title: 'ChromeDevToolsRecording',
  description:
    'A recording exported from the Chrome DevTools Recorder as JSON (a @puppeteer/replay UserFlow), posted as it is; its steps are checked by @puppeteer/replay and mapped to OTP steps (docs/recording.md)',
  type: 'object',
  required: ['title', 'steps'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 300 },
    timeout: { type: 'number' },
    selectorAttribute: { type: 'string' },
    steps: {
      type: 'array',
      minItems: 1,
      maxItems: 5000,
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string', description: 'navigate, click, change, keyDown, ...' } },
      },
    },
  },
});

export const RecordingUploadSchema = registerSchema({
  $id: 'OtpRecordingUpload',
  title: 'OtpRecordingUpload',
  description:
    "A finished recording: this service's own format (steps with `otp`) or Chrome DevTools Recorder JSON (steps with `type`)",
  anyOf: [{ $ref: 'OtpRecordingImport' }, { $ref: 'ChromeDevToolsRecording' }],
});
