import type Koa from 'koa';
import type { Logger } from 'pino';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../db/unavailable.js';
import { ERROR_STATUS } from '../error-status.js';
import { AppError } from '../errors.js';
import { requestState } from './request-state.js';

/**
 * Writes errors as responses (CONTRACT part 6): shape A `{error:{code,message,details}}` by
 * default, shape B with `Prefer: envelope`; statuses and codes come from src/error-status.ts,
 * which the dashboard's error page reads too.
 */
export { statusOf } from '../error-status.js';

/** Errors thrown by libraries (body parser, Koa) carry a status; map the ones we expect. */
function fromLibraryError(err: unknown): AppError | undefined {
  const e = err as { status?: number; type?: string; expose?: boolean; message?: string };
  if (typeof e?.status !== 'number' || e.status >= 500) return undefined;
  if (e.status === 413) {
    return new AppError('payload_too_large', 'The request body is larger than 1 MiB.', {
      field: 'body',
      reason: 'larger than 1 MiB',
    });
  }
  // The JSON parser refuses a `__proto__` key at any depth (prototype poisoning).
  if (e.status === 400 && /forbidden prototype property/.test(e.message ?? '')) {
    return new AppError('invalid_request', 'The request body has a "__proto__" key.', {
      field: 'body',
      reason: 'has a "__proto__" key, which is not accepted',
    });
  }
  if (e.status === 400 || e.status === 415) {
    const parse = e.type === 'entity.parse.failed' || /JSON/i.test(e.message ?? '');
    return new AppError(
      'invalid_request',
      parse
        ? 'The request body is not valid JSON.'
        : (e.expose && e.message) || 'The request is malformed.',
      { field: 'body', reason: parse ? 'malformed JSON' : 'malformed request' },
    );
  }
  return undefined;
}

/** A store error as one short line for the log (its code and message: never a URL). */
function storeErrorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return [e.code, e.message].filter((x) => typeof x === 'string').join(': ');
}

/** Writes the error response for any thrown value. Unexpected errors become a generic 500. */
export function writeError(ctx: Koa.Context, err: unknown, logger: Logger): void {
  let appError = err instanceof AppError ? err : fromLibraryError(err);
  const requestId = requestState(ctx).requestId;
  if (!appError && isStoreUnavailable(err)) {
    // PostgreSQL restarting or out of reach: the client retries; nothing to report but a line.
    logger.warn(
      { request_id: requestId, method: ctx.method, path: ctx.path, reason: storeErrorText(err) },
      'store unavailable',
    );
    appError = new AppError(
      'unavailable',
      'The store is unavailable for a moment; retry after the Retry-After seconds.',
      { retryAfter: STORE_RETRY_AFTER_SECONDS },
    );
  }
  if (!appError || appError.kind === 'internal') {
    logger.error(
      { err, request_id: requestId, method: ctx.method, path: ctx.path },
      'unhandled error',
    );
    appError = new AppError(
      'internal',
      `An unexpected error occurred. Quote request id ${requestId} when you report it.`,
    );
  }
  const [status, codeA, codeB] = ERROR_STATUS[appError.kind];
  ctx.status = status;
  for (const [name, value] of Object.entries(appError.headers ?? {})) ctx.set(name, value);
  if (appError.retryAfter !== undefined)
    ctx.set('Retry-After', String(Math.max(0, Math.ceil(appError.retryAfter))));
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="agentshelf"');
  if (status === 503) ctx.set('Connection', 'close');
  const field = appError.field ?? null;
  const reason = appError.reason ?? appError.message;
  if (requestState(ctx).envelope) {
    ctx.body = {
      success: false,
      error: { code: codeB, message: appError.message, details: { field, reason } },
      meta: { request_id: requestId, timestamp: new Date().toISOString() },
    };
  } else {
    ctx.body = {
      error: {
        code: codeA,
        message: appError.message,
        details: field ? `${field}: ${reason}` : reason,
      },
    };
  }
}
