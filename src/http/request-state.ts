import type Koa from 'koa';
import type { Transaction } from 'kysely';
import type { ApiKeyRow, Database } from '../db/schema.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { ApiDeps } from './route.js';

export const API_VERSION = 'v1';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What the middleware learns about a request, kept in `ctx.state`. The app sets the whole
 * object when a request arrives, so every request has the same shape (property reads on it
 * stay monomorphic on the hot path) and the fields are typed.
 */
export interface RequestState {
  /** The client's X-Request-Id, or one generated (req_...). */
  requestId: string;
  /** `Prefer: envelope`: answer in shape B. */
  envelope: boolean;
  receivedAt: Date;
  /** The authenticated key (on every route but the public ones). */
  key: ApiKeyRow | undefined;
  /** The key the audit log files the request under (set for refused revoked keys too). */
  auditKeyId: string | undefined;
  /** The body is a file or stream sent as is, never wrapped by `Prefer: envelope`. */
  raw: boolean;
  /** The body is JSON already serialised (a JsonBytes reply). */
  jsonBytes: boolean;
  /**
   * The transaction the handler writes in: set while an idempotent request runs, so its
   * change and its stored response commit together.
   */
  transaction: Transaction<Database> | undefined;
}

export function requestState(ctx: Koa.Context): RequestState {
  return ctx.state as RequestState;
}

function wantsEnvelope(header: string): boolean {
  if (header === '') return false;
  return header
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .includes('envelope');
}

/** Sets the request's state and the headers every answer carries (id, version, preference). */
export function openRequestState(ctx: Koa.Context, deps: Pick<ApiDeps, 'now'>): RequestState {
  const given = ctx.get('x-request-id');
  const state: RequestState = {
    requestId: REQUEST_ID.test(given) ? given : `req_${randomBase62(20)}`,
    envelope: wantsEnvelope(ctx.get('prefer')),
    receivedAt: deps.now(),
    key: undefined,
    auditKeyId: undefined,
    raw: false,
    jsonBytes: false,
    transaction: undefined,
  };
  ctx.state = state;
  ctx.set('X-Request-Id', state.requestId);
  ctx.set('X-API-Version', API_VERSION);
  if (state.envelope) ctx.set('Preference-Applied', 'envelope');
  return state;
}

/** Refuses a request for an API version we do not speak, or one that arrives while draining. */
export function checkAdmissible(ctx: Koa.Context, deps: Pick<ApiDeps, 'lifecycle'>): void {
  const version = ctx.get('x-api-version');
  if (version && version !== API_VERSION) {
    throw new AppError(
      'invalid_query_parameter',
      `X-API-Version '${version}' is not supported; supported versions: ${API_VERSION}.`,
      { field: 'X-API-Version', reason: `must be ${API_VERSION}` },
    );
  }
  if (deps.lifecycle.shuttingDown) {
    throw new AppError('unavailable', 'The server is shutting down; retry shortly.', {
      retryAfter: 1,
    });
  }
}

/** Turns what the router left unanswered (no route, or not this method) into errors. */
export function checkRouted(ctx: Koa.Context): void {
  if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
    throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
      field: 'method',
      reason: `allowed: ${ctx.response.get('Allow') || 'none'}`,
    });
  }
  if (ctx.status === 404 && ctx.body == null) {
    throw new AppError('not_found', `No route ${ctx.method} ${ctx.path}.`, {
      field: 'path',
      reason: 'no such route',
    });
  }
}
