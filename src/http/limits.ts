import type Koa from 'koa';
import type { ApiKeyRow } from '../db/schema.js';
import { limitsOfKey } from '../domain/access/plans.js';
import type { KeyLimits } from '../domain/access/plans.js';
import { limitError, type LimitDecision, type Limiter } from '../domain/access/rate-limiter.js';
import { requestState } from './request-state.js';

/**
 * The per-key checks (CONTRACT part 5), after authentication. Every response to an
 * authenticated request carries the minute window's X-RateLimit-* headers, the 429s too;
 * the error handler adds Retry-After from the error.
 */
export function limitRequest(
  ctx: Koa.Context,
  limiter: Limiter,
  key: ApiKeyRow,
): void | Promise<void> {
  const limits = limitsOfKey(key);
  const decision = limiter.consume(key.id, limits, requestState(ctx).receivedAt.getTime());
  // The in-memory limiter answers at once: no promise, no extra turn of the event loop.
  if (decision instanceof Promise) return decision.then((d) => applyDecision(ctx, d, limits));
  applyDecision(ctx, decision, limits);
}

function applyDecision(ctx: Koa.Context, decision: LimitDecision, limits: KeyLimits): void {
  ctx.set('X-RateLimit-Limit', String(decision.limit));
  ctx.set('X-RateLimit-Remaining', String(decision.remaining));
  ctx.set('X-RateLimit-Reset', String(Math.ceil(decision.resetAtMs / 1000)));
  if (decision.refusedBy) throw limitError(decision, limits);
}
