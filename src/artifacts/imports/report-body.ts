// The body of an import, streamed as it arrives: JUnit XML or CTRF JSON as the whole body (its
// Content-Type decides), or as the part named "file" of a multipart form (its type, else its name's
// ending, decides). Every byte counts against the limit (413 past it), whatever the headers claim.
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { AppError, ErrorCode, errors } from '../../errors.js';
import type { ImportFormat } from './import-service.js';

export interface ReportBody {
  format: ImportFormat;
  chunks: AsyncIterable<Buffer>;
}

const XML = /^(application|text)\/((junit|[a-z.-]+)\+)?xml$/;
const JSON_TYPE = /^application\/((vnd\.ctrf|[a-z.-]+)\+)?json$/;

const mediaType = (header: string | undefined) => (header ?? '').split(';')[0]!.trim().toLowerCase();

function formatOf(type: string, filename?: string): ImportFormat | undefined {
  if (XML.test(type) || ((type === 'application/octet-stream' || !type) && /\.xml$/i.test(filename ?? '')))
    return 'junit';
  if (JSON_TYPE.test(type) || ((type === 'application/octet-stream' || !type) && /\.json$/i.test(filename ?? '')))
    return 'ctrf';
  return undefined;
}

const unsupported = () =>
  new AppError(
    ErrorCode.unsupportedMediaType,
    'Send a JUnit report as application/xml, a CTRF report as application/json, or either as the part named "file" of a multipart/form-data body',
  );

async function* limited(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.length;
    if (seen > maxBytes) throw errors.payloadTooLarge(`The report is larger than ${maxBytes} bytes`, maxBytes);
    yield chunk;
  }
}

export async function openReportBody(req: IncomingMessage, maxBytes: number): Promise<ReportBody> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw errors.payloadTooLarge(`The report is larger than ${maxBytes} bytes`, maxBytes);
  const type = mediaType(req.headers['content-type']);
  if (type === 'multipart/form-data') return openFilePart(req, maxBytes);
  const format = formatOf(type);
  if (!format) throw unsupported();
  return { format, chunks: limited(req, maxBytes) };
}

/** The first file part, named "file"; other fields are ignored. */
function openFilePart(req: IncomingMessage, maxBytes: number): Promise<ReportBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 10, fieldSize: 1024, parts: 12 } });
    } catch (err) {
      return reject(errors.validation(`Malformed multipart body: ${(err as Error).message}`));
    }
    parser.on('file', (name, stream, info) => {
      const format = name === 'file' ? formatOf(mediaType(info.mimeType), info.filename) : undefined;
      if (!format) {
        stream.resume();
        return reject(
          name === 'file'
            ? unsupported()
            : errors.validation('Send the report in the part named "file"', [
                { field: `body.${name}`, message: 'unexpected file part' },
              ]),
        );
      }
      resolve({ format, chunks: limited(stream, maxBytes) });
    });
    parser.on('error', (err) => reject(errors.validation(`Malformed multipart body: ${(err as Error).message}`)));
    parser.on('close', () => reject(errors.validation('The form has no part named "file"')));
    req.pipe(parser);
  });
}

/** A bounded body as text (CTRF is parsed whole). */
export async function textOf(chunks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts).toString('utf8');
}
