import { decideRequest, type StoredWindows } from '../../db/queries/rate-limit-windows.js';
import type { Db } from '../../db/store.js';
import { monthOf, type MonthlyUsage } from './monthly-usage.js';
import { BURST_WINDOW_MS, MINUTE_WINDOW_MS, type KeyLimits } from './plans.js';
import type { LimitDecision, LimitKind } from './rate-limiter.js';

/** A request waiting for its key's next batch. */
interface Waiting {
  limits: KeyLimits;
  nowMs: number;
  resolve: (decision: LimitDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * The same three checks as RateLimiter, decided in the store (RATE_LIMIT_STORE=database, the
 * PostgreSQL default): one statement against the key's row in rate_limit_windows, so several
 * `serve` processes on one store hold each key to one burst, one minute and one month
 * between them. The monthly counts still go to api_key_usage (MonthlyUsage) for the usage
 * figures; the check itself reads the shared row.
 *
 * One statement per key is in flight at a time: the requests of a key that arrive while its
 * statement runs wait, and the next statement decides them all at once, in arrival order (as
 * many as the windows have room for go through, the first ones). Under load a statement
 * decides the requests of a whole round trip, where one statement each cost every request a
 * round trip and a turn on the row's lock (on PostgreSQL, half of a by-id request's CPU);
 * with no other request of the key in flight, a request waits for nothing more than before.
 */
export class SharedRateLimiter {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly deciding = new Set<string>();

  constructor(
    private readonly db: Db,
    readonly usage: MonthlyUsage,
  ) {}

  consume(keyId: string, limits: KeyLimits, nowMs: number): Promise<LimitDecision> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(keyId);
      const request = { limits, nowMs, resolve, reject };
      if (queue) queue.push(request);
      else this.waiting.set(keyId, [request]);
      if (!this.deciding.has(keyId)) this.decideNext(keyId);
    });
  }

  /** Decides every request of the key waiting now, in one statement; then the next ones. */
  private decideNext(keyId: string): void {
    const batch = this.waiting.get(keyId);
    if (!batch) return;
    this.waiting.delete(keyId);
    this.deciding.add(keyId);
    // Decided as of the latest arrival, under the limits the key has now.
    const last = batch[batch.length - 1]!;
    let nowMs = 0;
    for (const w of batch) nowMs = Math.max(nowMs, w.nowMs);
    const month = monthOf(nowMs);
    decideRequest(this.db, {
      keyId,
      nowMs,
      count: batch.length,
      burstMs: BURST_WINDOW_MS,
      minuteMs: MINUTE_WINDOW_MS,
      burst: last.limits.burst,
      perMinute: last.limits.perMinute,
      month: month.id,
      monthly: last.limits.monthly,
    })
      .then(
        (w) => {
          for (const [i, request] of batch.entries()) {
            if (i < w.allowed) this.usage.add(keyId, month.id);
            request.resolve(decision(w, i, last.limits, nowMs, month.endMs));
          }
        },
        (error: unknown) => {
          for (const request of batch) request.reject(error);
        },
      )
      .finally(() => {
        this.deciding.delete(keyId);
        this.decideNext(keyId);
      });
  }
}

/**
 * The decision of the batch's request `i` from the row its statement left: the first
 * `w.allowed` requests went through, each seeing the minute's count as it stood just after
 * it (as one statement each would have); the others were refused on the counts the row holds.
 */
function decision(
  w: StoredWindows,
  i: number,
  limits: KeyLimits,
  nowMs: number,
  monthEndMs: number,
): LimitDecision {
  const minuteEndMs = w.minute_start_ms + MINUTE_WINDOW_MS;
  const allowed = i < w.allowed;
  const minuteCount = allowed ? w.minute_count - w.allowed + i + 1 : w.minute_count;
  const base: LimitDecision = {
    refusedBy: null,
    retryAfterMs: 0,
    limit: limits.perMinute,
    remaining: Math.max(0, limits.perMinute - minuteCount),
    resetAtMs: minuteEndMs,
  };
  if (allowed) return base;
  // Refused: the row holds the counts it was refused on. Report the longest wait.
  let refusedBy: LimitKind = 'burst';
  let until = 0;
  if (w.burst_count >= limits.burst) until = w.burst_start_ms + BURST_WINDOW_MS;
  if (w.minute_count >= limits.perMinute && minuteEndMs > until) {
    refusedBy = 'minute';
    until = minuteEndMs;
  }
  if (limits.monthly !== null && w.month_count >= limits.monthly && monthEndMs > until) {
    refusedBy = 'month';
    until = monthEndMs;
  }
  return { ...base, refusedBy, retryAfterMs: Math.max(1, until - nowMs) };
}
