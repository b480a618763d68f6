import type { RateWindow } from '../../domain/discovery/policy.js';

export interface LimitDecision {
  allowed: boolean;
  /** Requests left in the fullest window after this one; null when no window is set. */
  remaining: number | null;
  /** Seconds until the window that refused the request starts over (0 when allowed). */
  retryAfter: number;
  /** The window that refused the request. */
  window?: RateWindow;
}

interface Counter {
  starts: number[];
  used: number[];
}

/**
 * Per-address limits over fixed windows aligned to the clock (a minute starts at :00), as
 * nginx's Lua twin does. A refused request is not counted, so a client that waits out
 * Retry-After is served. The clock is injected: tests move it by hand.
 */
export class IpRateLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly lengths: number[];

  constructor(
    private readonly windows: RateWindow[],
    private readonly now: () => number,
  ) {
    this.lengths = windows.map((w) => w.seconds * 1000);
  }

  /** Counts a request from `address` unless a window is full. */
  hit(address: string): LimitDecision {
    const n = this.windows.length;
    if (n === 0) return { allowed: true, remaining: null, retryAfter: 0 };
    const t = this.now();
    let c = this.counters.get(address);
    if (!c) {
      c = { starts: new Array<number>(n).fill(-1), used: new Array<number>(n).fill(0) };
      this.counters.set(address, c);
    }
    let remaining = Infinity;
    let wait = 0;
    let full: RateWindow | undefined;
    for (let i = 0; i < n; i++) {
      const length = this.lengths[i]!;
      const start = Math.floor(t / length) * length;
      if (c.starts[i] !== start) {
        c.starts[i] = start;
        c.used[i] = 0;
      }
      const max = this.windows[i]!.max;
      if (c.used[i]! >= max && start + length - t > wait) {
        wait = start + length - t;
        full = this.windows[i];
      }
      if (max - c.used[i]! < remaining) remaining = max - c.used[i]!;
    }
    if (full) {
      return {
        allowed: false,
        remaining: 0,
        retryAfter: Math.max(1, Math.ceil(wait / 1000)),
        window: full,
      };
    }
    for (let i = 0; i < n; i++) c.used[i]!++;
    return { allowed: true, remaining: remaining - 1, retryAfter: 0 };
  }

  /** Forgets addresses whose every window has ended (run now and then to bound memory). */
  prune(): number {
    const t = this.now();
    let removed = 0;
    for (const [address, c] of this.counters) {
      if (c.starts.every((start, i) => start + this.lengths[i]! <= t)) {
        this.counters.delete(address);
        removed++;
      }
    }
    return removed;
  }

  get size(): number {
    return this.counters.size;
  }
}
