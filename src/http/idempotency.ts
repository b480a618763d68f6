import type Koa from 'koa';
import type { Logger } from 'pino';
import { fingerprintRequest, runIdempotent } from '../domain/access/idempotency.js';
import type { StoredResponse } from '../domain/access/idempotency.js';
import { AppError } from '../errors.js';
import { rawBodyOf } from './body.js';
import { statusOf, writeError } from './error-handler.js';
import { requestState } from './request-state.js';
import type { ApiDeps } from './route.js';

/**
 * For the crash test only (test/http/idempotency-crash.test.ts): with this variable set to
 * `after-idempotent-commit`, the process kills itself once an idempotent change and its
 * response have committed, before the response is sent. Read once, at start.
 */
const CRASH_AFTER_COMMIT = process.env.AGENTSHELF_TEST_CRASH === 'after-idempotent-commit';

/**
 * Idempotency-Key (CONTRACT part 5): the rest of the route (body validation, handler) runs in
 * one transaction with the stored response, so a retry after any crash either replays the
 * response or makes the change for the first time, never twice.
 */
export function idempotency(deps: ApiDeps): Koa.Middleware {
  return async (ctx, next) => {
    const key = ctx.get('idempotency-key');
    if (!key) return next();
    if (key.length > 255) {
      throw new AppError('invalid_request', 'Idempotency-Key must be at most 255 characters.', {
        field: 'Idempotency-Key',
        reason: 'must be at most 255 characters',
      });
    }
    const state = requestState(ctx);
    const request = {
      apiKeyId: state.key!.id,
      key,
      fingerprint: fingerprintRequest(ctx.method, ctx.path, rawBodyOf(ctx)),
      now: deps.now(),
    };
    const outcome = await runIdempotent(
      deps.db,
      request,
      async (trx) => {
        state.transaction = trx;
        try {
          await next();
        } finally {
          state.transaction = undefined;
        }
        return { status: ctx.status, body: ctx.body };
      },
      (err) => refusalOf(ctx, err, deps.logger),
    );
    if (CRASH_AFTER_COMMIT && !outcome.replayed) process.kill(process.pid, 'SIGKILL');
    if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = outcome.response.status;
    ctx.body = outcome.response.body;
  };
}

/**
 * The outcome of a request we refused (4xx) is kept, and replayed as refused; one that failed
 * on our side (5xx) or was rate limited (429) is not, so the client can retry it.
 */
function refusalOf(ctx: Koa.Context, err: unknown, logger: Logger): StoredResponse | undefined {
  const status = err instanceof AppError ? statusOf(err.kind) : 500;
  if (status >= 500 || status === 429) return undefined;
  writeError(ctx, err, logger);
  return { status: ctx.status, body: ctx.body };
}
