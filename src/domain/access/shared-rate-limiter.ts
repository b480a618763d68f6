import { decideRequest } from '../../db/queries/rate-limit-windows.js';
import type { Db } from '../../db/store.js';
import { monthOf, type MonthlyUsage } from './monthly-usage.js';
import { BURST_WINDOW_MS, MINUTE_WINDOW_MS, type KeyLimits } from './plans.js';
import type { LimitDecision, LimitKind } from './rate-limiter.js';

/**
 * The same three checks as RateLimiter, decided in the store (RATE_LIMIT_STORE=database, the
 * PostgreSQL default): one statement per request against the key's row in
 * rate_limit_windows, so several `serve` processes on one store hold each key to one burst,
 * one minute and one month between them. The monthly counts still go to api_key_usage
 * (MonthlyUsage) for the usage figures; the check itself reads the shared row.
 */
export class SharedRateLimiter {
  constructor(
    private readonly db: Db,
    readonly usage: MonthlyUsage,
  ) {}

  async consume(keyId: string, limits: KeyLimits, nowMs: number): Promise<LimitDecision> {
    const month = monthOf(nowMs);
    const w = await decideRequest(this.db, {
      keyId,
      nowMs,
      burstMs: BURST_WINDOW_MS,
      minuteMs: MINUTE_WINDOW_MS,
      burst: limits.burst,
      perMinute: limits.perMinute,
      month: month.id,
      monthly: limits.monthly,
    });
    const minuteEndMs = w.minute_start_ms + MINUTE_WINDOW_MS;
    const decision: LimitDecision = {
      refusedBy: null,
      retryAfterMs: 0,
      limit: limits.perMinute,
      remaining: Math.max(0, limits.perMinute - w.minute_count),
      resetAtMs: minuteEndMs,
    };
    if (w.allowed) {
      this.usage.add(keyId, month.id);
      return decision;
    }
    // Refused: the row holds the counts it was refused on. Report the longest wait.
    let refusedBy: LimitKind = 'burst';
    let until = 0;
    if (w.burst_count >= limits.burst) until = w.burst_start_ms + BURST_WINDOW_MS;
    if (w.minute_count >= limits.perMinute && minuteEndMs > until) {
      refusedBy = 'minute';
      until = minuteEndMs;
    }
    if (limits.monthly !== null && w.month_count >= limits.monthly && month.endMs > until) {
      refusedBy = 'month';
      until = month.endMs;
    }
    return { ...decision, refusedBy, retryAfterMs: Math.max(1, until - nowMs) };
  }
}
