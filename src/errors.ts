/**
 * Errors the domain raises. They know nothing of HTTP: src/error-status.ts is the one table
 * that turns a kind into a status and a code, for the API (src/http/error-handler.ts writes
 * the body) and the dashboard's error page alike (CONTRACT part 6).
 */
export type ErrorKind =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'forbidden'
  | 'invalid_request'
  | 'payload_too_large'
  | 'method_not_allowed'
  | 'missing_query_parameter'
  | 'invalid_query_parameter'
  | 'missing_field'
  | 'invalid_field'
  | 'field_too_long'
  | 'validation'
  | 'not_found'
  | 'already_exists'
  | 'conflict'
  | 'rate_limited'
  | 'burst_limited'
  | 'quota_exceeded'
  | 'internal'
  | 'upstream'
  | 'unavailable'
  | 'timeout';

export interface AppErrorOptions {
  /** The field or parameter at fault, as a dotted path (`attributes.brand`). */
  field?: string;
  /** What is wrong with it, in a few words (`must be at most 150 characters`). */
  reason?: string;
  /** Seconds a client should wait (rate limits, resources not ready yet). */
  retryAfter?: number;
  /** Extra response headers (for instance `Allow`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly field: string | undefined;
  readonly reason: string | undefined;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.field = options.field;
    this.reason = options.reason;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }
}

export function notFound(resource: string, id: string): AppError {
  return new AppError('not_found', `No ${resource} with id '${id}'.`, {
    field: 'id',
    reason: 'not found',
  });
}

export function invalidField(field: string, reason: string): AppError {
  return new AppError('invalid_field', `${field} ${reason}.`, { field, reason });
}
