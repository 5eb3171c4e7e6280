// One error taxonomy for the service: a code, its HTTP status, a factory, and one normaliser.
// REST renders these in one place (src/rest/middleware/errors.ts).
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
  ai_quota_exceeded: 402,
  ai_not_configured: 503,
  ai_provider_failed: 502,
};

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
  conflict: (message: string, details: Record<string, unknown> = {}) => new AppError(ErrorCode.conflict, message, details),
  preconditionFailed: (message: string, details: Record<string, unknown> = {}) =>
    new AppError(ErrorCode.preconditionFailed, message, details),
  payloadTooLarge: (message: string, limitBytes?: number) =>
    new AppError(ErrorCode.payloadTooLarge, message, limitBytes ? { limitBytes } : {}),
  quotaExceeded: (message: string, details: Record<string, unknown>, upgradeUrl: string) =>
    new AppError(ErrorCode.quotaExceeded, message, details, { body: { upgradeUrl } }),
  rateLimited: (message: string, details: Record<string, unknown>, headers: Record<string, string>) =>
    new AppError(ErrorCode.rateLimited, message, details, { headers }),
  idempotencyKeyReused: (message: string) => new AppError(ErrorCode.idempotencyKeyReused, message),
  internal: (message = 'Internal error') => new AppError(ErrorCode.internal, message),
  aiQuotaExceeded: (message: string, details: Record<string, unknown>, upgradeUrl: string) =>
    new AppError(ErrorCode.aiQuotaExceeded, message, details, { body: { upgradeUrl } }),
  aiNotConfigured: (message: string) => new AppError(ErrorCode.aiNotConfigured, message),
  aiProviderFailed: (message: string, details: Record<string, unknown> = {}) => new AppError(ErrorCode.aiProviderFailed, message, details),
};

/** Turns anything thrown into an AppError; unknown errors become INTERNAL without leaking their text. */
export function normaliseError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; statusCode?: number; httpCode?: number; message?: string; type?: string; expose?: boolean };
  const status = e?.status ?? e?.statusCode ?? e?.httpCode;
  if (status === 413) return errors.payloadTooLarge(e.message ?? 'Request body too large');
  if (status === 415) return new AppError(ErrorCode.unsupportedMediaType, e.message ?? 'Unsupported media type');
  // Body-parser failures (malformed JSON and friends) are the client's fault.
  if (status === 400 || e?.type === 'entity.parse.failed') {
    return errors.validation(e?.expose === false ? 'Malformed request' : `Malformed request: ${e?.message ?? ''}`.trim());
  }
  return errors.internal();
}
