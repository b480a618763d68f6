import { AppError } from '../../errors.js';
import { monthOf, type Month, type MonthlyUsage } from './monthly-usage.js';
import { BURST_WINDOW_MS, MINUTE_WINDOW_MS, type KeyLimits } from './plans.js';

export type LimitKind = 'burst' | 'minute' | 'month';

/** The outcome of one request's checks, with the per-minute window the headers describe. */
export interface LimitDecision {
  /** The check that refused the request, or null when it may go ahead (and was counted). */
  refusedBy: LimitKind | null;
  /** Milliseconds until the refusing check would let a request through; 0 when allowed. */
  retryAfterMs: number;
  /** Requests allowed per minute (X-RateLimit-Limit). */
  limit: number;
  /** Requests left in the current minute window (X-RateLimit-Remaining). */
  remaining: number;
  /** When the current minute window ends, in ms since the epoch (X-RateLimit-Reset). */
  resetAtMs: number;
}

/**
 * Decides and counts a request against a key's limits: in memory (RateLimiter) or in the
 * store every process shares (SharedRateLimiter). A promise only when it asks the store.
 */
export interface Limiter {
  /** The monthly counts (api_key_usage) the limiter adds to. */
  readonly usage: MonthlyUsage;
  consume(keyId: string, limits: KeyLimits, nowMs: number): LimitDecision | Promise<LimitDecision>;
}

/** A fixed window that opens with the first request after the previous one ended. */
interface Window {
  startMs: number;
  count: number;
}

interface KeyWindows {
  burst: Window;
  minute: Window;
}

/**
 * The three checks of CONTRACT part 5, per key: burst (floor(burst/6) in 10 seconds), per
 * minute, and the calendar month (UTC). Burst and minute windows live in memory (a restart
 * forgets them, which at worst grants one more window); the month's count persists through
 * MonthlyUsage.
 *
 * `consume` is synchronous: in one process no two requests can interleave between the check
 * and the count, so N concurrent requests on a key allowing M < N let exactly M through.
 * A refused request counts against nothing, so a client that waits Retry-After gets in.
 */
export class RateLimiter implements Limiter {
  private readonly windows = new Map<string, KeyWindows>();
  private month: Month = monthOf(0);

  constructor(readonly usage: MonthlyUsage) {}

  consume(keyId: string, limits: KeyLimits, nowMs: number): LimitDecision {
    let w = this.windows.get(keyId);
    if (!w) {
      w = { burst: { startMs: nowMs, count: 0 }, minute: { startMs: nowMs, count: 0 } };
      this.windows.set(keyId, w);
    }
    roll(w.burst, BURST_WINDOW_MS, nowMs);
    roll(w.minute, MINUTE_WINDOW_MS, nowMs);
    if (nowMs < this.month.startMs || nowMs >= this.month.endMs) this.month = monthOf(nowMs);
    const month = this.month;

    // When several checks refuse, report the longest wait: retrying sooner would fail anyway.
    // (Straight-line checks: this runs on every request, and allocates nothing.)
    let refusedBy: LimitKind | null = null;
    let refusedUntilMs = 0;
    if (w.burst.count >= limits.burst) {
      refusedBy = 'burst';
      refusedUntilMs = w.burst.startMs + BURST_WINDOW_MS;
    }
    const minuteEndMs = w.minute.startMs + MINUTE_WINDOW_MS;
    if (w.minute.count >= limits.perMinute && minuteEndMs > refusedUntilMs) {
      refusedBy = 'minute';
      refusedUntilMs = minuteEndMs;
    }
    const monthly = limits.monthly;
    if (
      monthly !== null &&
      this.usage.requestsOf(keyId, month.id) >= monthly &&
      month.endMs > refusedUntilMs
    ) {
      refusedBy = 'month';
      refusedUntilMs = month.endMs;
    }
    if (refusedBy === null) {
      w.burst.count++;
      w.minute.count++;
      this.usage.add(keyId, month.id);
    }
    return {
      refusedBy,
      retryAfterMs: refusedBy === null ? 0 : Math.max(1, refusedUntilMs - nowMs),
      limit: limits.perMinute,
      remaining: Math.max(0, limits.perMinute - w.minute.count),
      resetAtMs: w.minute.startMs + MINUTE_WINDOW_MS,
    };
  }
}

/** Opens a new window once the current one has ended (a clock that steps back keeps it). */
function roll(window: Window, lengthMs: number, nowMs: number): void {
  if (nowMs >= window.startMs + lengthMs) {
    window.startMs = nowMs;
    window.count = 0;
  }
}

/** The 429 for a refused request: Retry-After in whole seconds, rounded up. */
export function limitError(decision: LimitDecision, limits: KeyLimits): AppError {
  const retryAfter = Math.ceil(decision.retryAfterMs / 1000);
  const wait = `Retry after ${retryAfter} s.`;
  switch (decision.refusedBy) {
    case 'burst':
      return new AppError(
        'burst_limited',
        `Burst limit exceeded: at most ${limits.burst} requests in 10 seconds for this key. ${wait}`,
        {
          field: 'Authorization',
          reason: `over ${limits.burst} requests in 10 seconds`,
          retryAfter,
        },
      );
    case 'month':
      return new AppError(
        'quota_exceeded',
        `Monthly quota exceeded: ${limits.monthly} requests per calendar month (UTC) for this key. ${wait}`,
        {
          field: 'Authorization',
          reason: `over ${limits.monthly} requests this month`,
          retryAfter,
        },
      );
    default:
      return new AppError(
        'rate_limited',
        `Rate limit exceeded: at most ${limits.perMinute} requests a minute for this key. ${wait}`,
        {
          field: 'Authorization',
          reason: `over ${limits.perMinute} requests a minute`,
          retryAfter,
        },
      );
  }
}
