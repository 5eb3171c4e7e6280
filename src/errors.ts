// One error taxonomy for the service: a code, its HTTP status, a factory, and one normaliser.
// REST renders these in one place (src/rest/middleware/errors.ts); MCP tool results and the console
// use the same normaliser, so every door says the same thing about the same failure.

import { type Logger, throttledLog } from './log.js';
import { isDatabaseUnavailable, isStorageUnavailable } from './unavailable.js';
/** One failing field of a VALIDATION_ERROR: a path such as `body.steps[2].otp.locator.by`, and what is wrong. */
export interface FieldError {
  field: string;
  message: string;
}

export const ErrorCode = {
  validation: 'VALIDATION_ERROR',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  methodNotAllowed: 'METHOD_NOT_ALLOWED',
  conflict: 'CONFLICT',
  preconditionFailed: 'PRECONDITION_FAILED',
  payloadTooLarge: 'PAYLOAD_TOO_LARGE',
  unsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
  quotaExceeded: 'QUOTA_EXCEEDED',
  idempotencyKeyReused: 'IDEMPOTENCY_KEY_REUSED',
  rateLimited: 'RATE_LIMITED',
  internal: 'INTERNAL',
  // Lower case like the spec's `ai_quota_exceeded`: a part the service needs is down; retry later.
  databaseUnavailable: 'database_unavailable',
  storageUnavailable: 'storage_unavailable',
  /** The tenant's monthly allowance of AI calls is used up (the spec names this code in lower case). */
  aiQuotaExceeded: 'ai_quota_exceeded',
  /** No language model is configured (AI_BASE_URL, AI_MODEL) for a route that needs one. */
  aiNotConfigured: 'ai_not_configured',
  /** The configured language model failed or answered nothing usable. */
  aiProviderFailed: 'ai_provider_failed',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const statusOf: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  QUOTA_EXCEEDED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  database_unavailable: 503,
  storage_unavailable: 503,
  ai_quota_exceeded: 402,
  ai_not_configured: 503,
  ai_provider_failed: 502,
};

/**
 * Seconds a client is told to wait (Retry-After) when the database or the object store is down: a
 * managed PostgreSQL fail-over takes 5 to 30 s, so a few seconds lets a client poll its way through
 * without hammering a service that is itself waiting.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Extra top-level members of the error body (e.g. upgradeUrl) and response headers. */
    readonly extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = statusOf[code];
  }

  toBody(): Record<string, unknown> {
    return { error: { code: this.code, message: this.message, details: this.details }, ...this.extra.body };
  }
}

export const errors = {
  validation: (message: string, fields: FieldError[] = []) =>
    new AppError(ErrorCode.validation, message, fields.length ? { fields } : {}),
  unauthorized: (message = 'A valid API key is required (Authorization: Bearer svc_pk_...)') =>
    new AppError(ErrorCode.unauthorized, message),
  forbidden: (message: string) => new AppError(ErrorCode.forbidden, message),
  notFound: (what: string, id?: string) =>
    new AppError(ErrorCode.notFound, id ? `${what} ${id} not found` : `${what} not found`, id ? { id } : {}),
  conflict: (message: string, details: Record<string, unknown> = {}) =>
    new AppError(ErrorCode.conflict, message, details),
  preconditionFailed: (message: string, details: Record<string, unknown> = {}) =>
    new AppError(ErrorCode.preconditionFailed, message, details),
  /** A file (an imported report) that is not what it claims to be: where it goes wrong, 1-based. */
  malformedFile: (message: string, line: number, column: number) =>
    new AppError(ErrorCode.validation, `${message} (line ${line}, column ${column})`, { line, column }),
  payloadTooLarge: (message: string, limitBytes?: number) =>
    new AppError(ErrorCode.payloadTooLarge, message, limitBytes ? { limitBytes } : {}),
  quotaExceeded: (message: string, details: Record<string, unknown>, upgradeUrl: string) =>
    new AppError(ErrorCode.quotaExceeded, message, details, { body: { upgradeUrl } }),
  rateLimited: (message: string, details: Record<string, unknown>, headers: Record<string, string>) =>
    new AppError(ErrorCode.rateLimited, message, details, { headers }),
  idempotencyKeyReused: (message: string) => new AppError(ErrorCode.idempotencyKeyReused, message),
  internal: (message = 'Internal error') => new AppError(ErrorCode.internal, message),
  databaseUnavailable: () =>
    new AppError(
      ErrorCode.databaseUnavailable,
      'The database cannot be reached; the request was not completed. Retry after the number of seconds in Retry-After (a POST with the same Idempotency-Key)',
      { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
      { headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } },
    ),
  storageUnavailable: () =>
    new AppError(
      ErrorCode.storageUnavailable,
      'The file store cannot be reached; nothing was stored. Retry after the number of seconds in Retry-After',
      { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
      { headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } },
    ),
  aiQuotaExceeded: (message: string, details: Record<string, unknown>, upgradeUrl: string) =>
    new AppError(ErrorCode.aiQuotaExceeded, message, details, { body: { upgradeUrl } }),
  aiNotConfigured: (message: string) => new AppError(ErrorCode.aiNotConfigured, message),
  aiProviderFailed: (message: string, details: Record<string, unknown> = {}) =>
    new AppError(ErrorCode.aiProviderFailed, message, details),
};

/** Which part of the service an error says is down, if any (storage first: its driver tags what it throws). */
export function unavailablePart(err: unknown): 'database' | 'storage' | undefined {
  if (err instanceof AppError) {
    if (err.code === ErrorCode.databaseUnavailable) return 'database';
    if (err.code === ErrorCode.storageUnavailable) return 'storage';
    return undefined;
  }
  if (isStorageUnavailable(err)) return 'storage';
  if (isDatabaseUnavailable(err)) return 'database';
  return undefined;
}

/**
 * Turns anything thrown into an AppError; unknown errors become INTERNAL without leaking their text.
 * An AppError's message is the service's own text: no driver, SDK or SQL text ever reaches a body.
 */
export function normaliseError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const part = unavailablePart(err);
  if (part === 'storage') return errors.storageUnavailable();
  if (part === 'database') return errors.databaseUnavailable();
  const e = err as {
    status?: number;
    statusCode?: number;
    httpCode?: number;
    message?: string;
    type?: string;
    expose?: boolean;
  };
  const status = e?.status ?? e?.statusCode ?? e?.httpCode;
  if (status === 413) return errors.payloadTooLarge(e.message ?? 'Request body too large');
  if (status === 415) return new AppError(ErrorCode.unsupportedMediaType, e.message ?? 'Unsupported media type');
  // Body-parser failures (malformed JSON and friends) are the client's fault.
  if (status === 400 || e?.type === 'entity.parse.failed') {
    return errors.validation(
      e?.expose === false ? 'Malformed request' : `Malformed request: ${e?.message ?? ''}`.trim(),
    );
  }
  return errors.internal();
}

/** A failure as any door may tell it (an OTP error frame, a run's reason): the taxonomy's code, a message safe to show, when to retry. */
export interface PublicFailure {
  code: ErrorCode;
  status: number;
  message: string;
  /** Set for database_unavailable and storage_unavailable. */
  retryAfterSeconds?: number;
}

/** normaliseError for doors that are not HTTP: never the driver's text, a host, SQL or a stack. */
export function publicFailure(err: unknown): PublicFailure {
  const appError = normaliseError(err);
  const retryAfter = appError.extra.headers?.['Retry-After'];
  return {
    code: appError.code,
    status: appError.status,
    message: appError.message,
    ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}),
  };
}

/**
 * Logs the failures a door answers with 5xx: each unexpected one (500) as it happens; an outage's
 * 503s, which every request repeats while it lasts, once per part every 10 s with how many were
 * left out (the outage's start and end are logged where it is detected).
 */
export function failureLog(
  log: Logger,
): (msg: string, err: unknown, answered: AppError, fields?: Record<string, unknown>) => void {
  const unavailable = throttledLog(log, 10_000, 'error');
  return (msg, err, answered, fields = {}) => {
    if (answered.status < 500) return;
    if (unavailablePart(answered)) return unavailable(answered.code, `${msg}: ${answered.code}`, { ...fields, err });
    log.error(msg, { ...fields, err });
  };
}
