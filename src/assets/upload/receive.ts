// Reads a multipart/form-data request as it arrives: the one `file` part streams through a Meter
// (SHA-256, byte count, size limit) straight into a storage driver, other parts are small text
// fields. Nothing touches a temporary directory and nothing is buffered whole. Whatever goes wrong
// (limit, bad form, client gone, storage failure), the stored object is removed before the error
// leaves here, and a store that is down is never blamed on the client's body.
import type { IncomingMessage } from 'node:http';
import { finished, pipeline, type Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError, ErrorCode, errors } from '../../errors.js';
import { textProblem } from '../../validation/text.js';
import { isStorageUnavailable } from '../storage/unavailable.js';
import { LimitExceeded, Meter } from './meter.js';

export interface IncomingFile {
  /** The client's file name (base name only); used for display, never as a path. */
  filename: string;
  /** The part's declared type, lower-case, without parameters. */
  contentType: string;
}

export interface ReceivedFile extends IncomingFile {
  size: number;
  sha256: string;
}

export interface ReceiveOptions {
  /** Most bytes the file may have; one more fails the upload with LimitExceeded. */
  limitBytes: number;
  /** Text fields the form may carry besides `file`. */
  fieldNames: readonly string[];
  /** Checks the file part before any byte is stored; throws to refuse it. */
  accept(file: IncomingFile): void;
  /** Writes the file; must leave nothing behind when the stream fails. */
  store(body: Readable, file: IncomingFile): Promise<void>;
  /** Removes what `store` wrote, when the upload fails after it completed. */
  discard(): Promise<void>;
}

export const FILE_FIELD = 'file';
const FIELD_LIMITS = { fields: 10, fieldSize: 1024, fieldNameSize: 100, parts: 12, files: 1, headerPairs: 20 };
/** Upper bound of a form's bytes besides the file (part headers, boundaries, small fields). */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

function openParser(req: IncomingMessage): busboy.Busboy {
  try {
    return busboy({ headers: req.headers, limits: FIELD_LIMITS, defParamCharset: 'utf8' });
  } catch (err) {
    if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
      throw new AppError(
        ErrorCode.unsupportedMediaType,
        'Send the upload as multipart/form-data with the file in a part named "file"',
      );
    }
    throw errors.validation(`Malformed multipart body: ${(err as Error).message}`);
  }
}

function normaliseType(mimeType: string | undefined): string {
  const type = (mimeType ?? '').split(';')[0].trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(type) ? type : 'application/octet-stream';
}

function displayName(filename: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const cut = (filename ?? '')
    .replace(/[\u0000-\u001f\u007f/\\]/g, '')
    .trim()
    .slice(0, 255);
  // A lone surrogate (or half a pair cut above) cannot be stored: U+FFFD, as for an undecodable byte.
  const clean = cut.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return clean || 'file';
}

export async function receiveUpload(
  req: IncomingMessage,
  options: ReceiveOptions,
): Promise<{ fields: Record<string, string>; file: ReceivedFile }> {
  const parser = openParser(req);
  const fields: Record<string, string> = {};
  let file: IncomingFile | undefined;
  let meter: Meter | undefined;
  let storing: Promise<boolean> | undefined;
  let failure: unknown;
  /** What the store failed with: when the store is down, that is the answer, whatever the torn-down body said first. */
  let storeFailure: unknown;
  let stopParsing!: (err: unknown) => void;
  const parsed = new Promise<void>((resolve, reject) => {
    parser.once('close', resolve);
    stopParsing = reject;
  });

  const fail = (err: unknown) => {
    if (failure !== undefined) return;
    failure = err;
    req.unpipe(parser);
    meter?.destroy(err instanceof Error ? err : new Error(String(err)));
    stopParsing(err);
  };
  const malformed = (err: Error) => errors.validation(`Malformed multipart body: ${err.message}`);

  parser.on('file', (name, stream, info) => {
    if (name !== FILE_FIELD || file) {
      stream.resume();
      return fail(
        errors.validation(`Only one file, in the part named "${FILE_FIELD}", is accepted`, [
          { field: `body.${name}`, message: 'unexpected file part' },
        ]),
      );
    }
    file = { filename: displayName(info.filename), contentType: normaliseType(info.mimeType) };
    try {
      options.accept(file);
    } catch (err) {
      stream.resume();
      return fail(err);
    }
    meter = new Meter(options.limitBytes);
    stream.on('error', (err) => fail(malformed(err)));
    // Destroys both ends together on failure; errors themselves are judged below.
    pipeline(stream, meter, () => {});
    const writing = options.store(meter, file);
    storing = writing.then(
      () => true,
      (err) => {
        storeFailure = err;
        fail(err);
        return false;
      },
    );
  });
  parser.on('field', (name, value, info) => {
    if (name === FILE_FIELD) {
      return fail(
        errors.validation(`The part "${FILE_FIELD}" must be a file (curl: -F ${FILE_FIELD}=@path)`, [
          { field: `body.${FILE_FIELD}`, message: 'must be a file part' },
        ]),
      );
    }
    if (!options.fieldNames.includes(name)) {
      return fail(
        errors.validation(`Unknown form field "${name}"`, [
          { field: `body.${name}`, message: `allowed fields: ${[FILE_FIELD, ...options.fieldNames].join(', ')}` },
        ]),
      );
    }
    if (info.valueTruncated) {
      return fail(
        errors.validation(`Form field "${name}" is too long`, [
          { field: `body.${name}`, message: `at most ${FIELD_LIMITS.fieldSize} bytes` },
        ]),
      );
    }
    const problem = textProblem(value);
    if (problem)
      return fail(errors.validation(`Form field "${name}" ${problem}`, [{ field: `body.${name}`, message: problem }]));
    fields[name] = value;
  });
  for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
    parser.on(event, () =>
      fail(errors.validation(`Too many form parts: one file and at most ${FIELD_LIMITS.fields} small fields`)),
    );
  }
  parser.on('error', (err: Error) => fail(malformed(err)));
  finished(req, (err) => {
    if (err) fail(errors.validation('The upload was interrupted before it was complete'));
  });
  req.pipe(parser);

  await parsed.catch(() => {});
  const stored = storing ? await storing : false;
  if (failure === undefined && !file) {
    failure = errors.validation(`The form has no file; send it in a part named "${FILE_FIELD}"`, [
      { field: `body.${FILE_FIELD}`, message: 'required' },
    ]);
  }
  if (failure !== undefined) {
    if (stored) await options.discard();
    // The size limit explains any storage error that followed it. A store that is down also tears the
    // file stream down ("aborted", "premature close"): that is not a malformed body.
    if (meter?.exceeded) throw new LimitExceeded(options.limitBytes);
    throw isStorageUnavailable(storeFailure) ? storeFailure : failure;
  }
  return { fields, file: { ...file!, size: meter!.bytes, sha256: meter!.digest() } };
}
