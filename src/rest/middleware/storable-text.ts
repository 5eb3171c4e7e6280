// Text PostgreSQL cannot store (NUL, unpaired surrogates; see validation/text.ts) is refused where a
// request enters, once for every route: the path (ids), the query, the header values, and (after the
// body parser) every string and key of a JSON body. Multipart text fields are checked as they are
// read (assets/upload/receive.ts); requests Node's HTTP parser refuses get the same error body
// (answerClientError).
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { errors, type FieldError } from '../../errors.js';
import { clip } from '../../validation/field-errors.js';
import { textProblem, unstorableText } from '../../validation/text.js';

function refuse(problem: FieldError): never {
  throw errors.validation(`Text that cannot be stored: ${problem.field} ${problem.message}`, [problem]);
}

function pathProblem(path: string): FieldError | undefined {
  // Only a percent-escape can hide such text in a path (Node refuses a raw NUL in the request line).
  if (!path.includes('%')) return undefined;
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      // Not UTF-8 once decoded: the router keeps the segment as it came, which can be stored.
      continue;
    }
    const problem = textProblem(decoded);
    if (problem) return { field: 'path', message: `segment ${JSON.stringify(clip(segment, 60))} ${problem}` };
  }
  return undefined;
}

function queryProblem(query: Record<string, string | string[] | undefined>): FieldError | undefined {
  for (const [name, value] of Object.entries(query)) {
    const field = `query.${clip(name, 60)}`;
    const nameProblem = textProblem(name);
    if (nameProblem) return { field, message: `has a name that ${nameProblem}` };
    for (const v of Array.isArray(value) ? value : [value ?? '']) {
      const problem = textProblem(v);
      if (problem) return { field, message: problem };
    }
  }
  return undefined;
}

function headerProblem(headers: Record<string, string | string[] | undefined>): FieldError | undefined {
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value ?? '']) {
      const problem = textProblem(v);
      if (problem) return { field: `header.${name}`, message: problem };
    }
  }
  return undefined;
}

/** Before routing: the path, the query and the headers. */
export function storableRequestMiddleware(): Koa.Middleware {
  return (ctx, next) => {
    const problem =
      pathProblem(ctx.path) ?? (ctx.querystring ? queryProblem(ctx.query) : undefined) ?? headerProblem(ctx.headers);
    if (problem) refuse(problem);
    return next();
  };
}

/** After the JSON body parser: every string and key of the body, at any depth. */
export function storableBodyMiddleware(): Koa.Middleware {
  return (ctx, next) => {
    const body = (ctx.request as { body?: unknown }).body;
    if (body !== undefined && body !== null && typeof body === 'object') {
      const problem = unstorableText(body, 'body');
      if (problem) refuse(problem);
    }
    return next();
  };
}

/**
 * Answers a request Node's HTTP parser refused (a NUL in a header value, a malformed request line)
 * with the service's one error body instead of a bare 400, then closes the connection. For the
 * server's `clientError` event.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  let status = '400 Bad Request';
  let error = errors.validation(`Malformed request (${err.code ?? 'unparsable'})`, [
    {
      field: 'headers',
      message: 'the request line or a header is malformed, for example a NUL character in a header value',
    },
  ]);
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = '431 Request Header Fields Too Large';
    error = errors.payloadTooLarge('The request headers are too large');
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = '408 Request Timeout';
    error = errors.validation('The request did not arrive in time');
  }
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
