// The recording routes (docs/recording.md): start and stop a recording on a connected executor
// session, read one with its events, and post a finished recording (ours or Chrome DevTools
// Recorder JSON) to get a test case.

import type Koa from 'koa';
import { errors } from '../../errors.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import { type QueryOf, type RouteDef, route } from '../../rest/route.js';
import type { Recordings } from '../engine/recordings.js';
import type { TestCaseStep } from '../protocol/schemas/index.js';
import { convertChromeRecording, isChromeRecording, parseChromeRecordingText } from './chrome-recorder.js';
import {
  RecordingPageSchema,
  RecordingSchema,
  RecordingStartSchema,
  RecordingUploadSchema,
} from './recording-schemas.js';

const recordingsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageQueryProperties, status: { enum: ['recording', 'stopped'] } },
} as const;
type RecordingsQuery = QueryOf<typeof recordingsQuery>;

interface StartBody {
  title?: string;
  url?: string;
}

/** Our own format (OtpRecordingImport); a Chrome recording is told apart by its steps' `type`. */
interface ImportBody {
  title: string;
  description?: string;
  startUrl?: string;
  labels?: string[];
  steps: TestCaseStep[];
}

const dropNote = (dropped: Record<string, number>) => {
  const parts = Object.entries(dropped).map(([type, n]) => `${type} ×${n}`);
  return parts.length ? ` Steps with no OTP equivalent were left out: ${parts.join(', ')}.` : '';
};

const MAX_TEXT_BYTES = 2 * 1024 * 1024;

/**
 * A recording file sent as it is, as text/plain: the JSON that Chrome's JSON stringifier writes ends
 * with a `//# recorderSourceMap=` line, which no JSON parser takes. JSON bodies are parsed by the app.
 */
const recordingText: Koa.Middleware = async (koa, next) => {
  if (koa.is('text/plain')) {
    let text = '';
    for await (const chunk of koa.req) {
      text += chunk;
      if (text.length > MAX_TEXT_BYTES)
        throw errors.payloadTooLarge(`A recording is at most ${MAX_TEXT_BYTES} bytes`, MAX_TEXT_BYTES);
    }
    try {
      (koa.request as { body?: unknown }).body = parseChromeRecordingText(text);
    } catch (err) {
      throw errors.validation(`The recording is not JSON: ${(err as Error).message}`, [
        { field: 'body', message: 'must be JSON (a trailing //# recorderSourceMap= line is allowed)' },
      ]);
    }
  }
  return next();
};

export function recordingRoutes({ recordings }: { recordings: Recordings }): RouteDef[] {
  const tag = 'otp';
  return [
    route<StartBody>({
      method: 'post',
      path: '/otp/sessions/:id/recordings',
      auth: 'write',
      tag,
      status: 201,
      body: RecordingStartSchema,
      response: RecordingSchema,
      operationId: 'startOtpRecording',
      errors: [404, 409],
      summary: 'Start recording on a connected executor session: the service sends it record.start',
      description:
        'Each user action then arrives as an event.recorded frame and is stored at once (GET /otp/recordings/:id). 404: no such session in the project; 409: the session is closed, already records, or declared capabilities.record false.',
      handler: ({ principal, params, body }) => recordings.start(principal, params.id, body),
    }),
    route<unknown, RecordingsQuery>({
      method: 'get',
      path: '/otp/recordings',
      auth: 'read',
      tag,
      query: recordingsQuery,
      operationId: 'listOtpRecordings',
      response: RecordingPageSchema,
      summary: 'Recordings of the project, oldest first',
      handler: ({ principal, query }) => recordings.list(principal.projectId, query),
    }),
    {
      method: 'get',
      path: '/otp/recordings/:id',
      auth: 'read',
      tag,
      operationId: 'getOtpRecording',
      response: RecordingSchema,
      summary: 'A recording with every step stored so far, in order',
      handler: ({ principal, params }) => recordings.view(principal.projectId, params.id),
    },
    {
      method: 'post',
      path: '/otp/recordings/:id/stop',
      auth: 'write',
      tag,
      operationId: 'stopOtpRecording',
      response: RecordingSchema,
      errors: [402, 409],
      summary: 'Stop a recording: its steps become a test case (testCaseId) and the executor gets record.stop',
      description:
        '409 when it was already stopped (details.testCaseId names its test case). A recording with no step stops without a test case.',
      handler: ({ principal, params }) => recordings.stop(principal, params.id),
    },
    route<ImportBody>({
      method: 'post',
      path: '/otp/recordings',
      auth: 'write',
      tag,
      status: 201,
      body: RecordingUploadSchema,
      response: { $ref: 'TestCase' },
      operationId: 'importOtpRecording',
      errors: [402, 413],
      before: [recordingText],
      summary: "A finished recording (this service's format, or Chrome DevTools Recorder JSON) becomes a test case",
      description:
        'Answers the created test case. The body is JSON; a recording file may also be sent as it is with Content-Type text/plain (a trailing `//# recorderSourceMap=` line is allowed). Chrome recordings are checked by @puppeteer/replay and mapped step by step; steps with no OTP equivalent (setViewport, keyUp, ...) are left out and named in the test case description (docs/recording.md).',
      handler: async ({ principal, body }) => {
        if (isChromeRecording(body)) {
          const flow = convertChromeRecording(body);
          return recordings.importTestCase(principal, {
            title: flow.title,
            description: `Imported from a Chrome DevTools Recorder recording.${dropNote(flow.dropped)}`,
            steps: flow.steps,
          });
        }
        const from = body.startUrl ? ` Recorded from ${body.startUrl}.` : '';
        return recordings.importTestCase(principal, {
          title: body.title,
          description: body.description ?? `Imported recording.${from}`,
          steps: body.steps,
          ...(body.labels ? { labels: body.labels } : {}),
        });
      },
    }),
  ];
}
