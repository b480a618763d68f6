import type { Logger } from 'pino';
import { addMonthlyUsage, selectMonthlyUsage } from '../../db/queries/monthly-usage.js';
import type { Db } from '../../db/store.js';
import { PollingWorker } from '../../runtime/polling-worker.js';

/** A calendar month in UTC: `2026-11`, from its first millisecond to the next month's. */
export interface Month {
  id: string;
  startMs: number;
  endMs: number;
}

export function monthOf(ms: number): Month {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  return {
    id: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`,
    startMs: Date.UTC(year, month, 1),
    endMs: Date.UTC(year, month + 1, 1),
  };
}

interface Pending {
  keyId: string;
  month: string;
  requests: number;
}

/**
 * Requests counted against each key's monthly quota. The count is decided in memory (so
 * checking it costs no I/O and concurrent requests cannot both take the last one) and
 * written to `api_key_usage` in batches: every USAGE_FLUSH_MS, and on shutdown. A crash
 * loses at most the requests of the last interval, which a key may then make again.
 *
 * Writes add deltas (`requests = requests + n`), so two processes on one store never
 * overwrite each other's counts, and each flush reads back the total.
 */
export class MonthlyUsage {
  private readonly used = new Map<string, { month: string; requests: number }>();
  private pending = new Map<string, Pending>();
  private tail: Promise<void> = Promise.resolve();
  private poller: PollingWorker | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Reads the counts of a month from the store; call before serving. */
  async load(month: string): Promise<void> {
    const rows = await selectMonthlyUsage(this.db, month);
    for (const row of rows) {
      this.used.set(row.api_key_id, {
        month,
        requests: Number(row.requests) + this.unflushed(row.api_key_id, month),
      });
    }
  }

  /** Requests a key has made in a month, flushed or not. */
  requestsOf(keyId: string, month: string): number {
    const entry = this.used.get(keyId);
    // A month this process has not counted yet starts at zero: it began after the last load.
    return entry && entry.month === month ? entry.requests : 0;
  }

  /** Counts one request. */
  add(keyId: string, month: string): void {
    const entry = this.used.get(keyId);
    if (entry && entry.month === month) entry.requests++;
    else this.used.set(keyId, { month, requests: 1 });
    const slot = `${month} ${keyId}`;
    const pending = this.pending.get(slot);
    if (pending) pending.requests++;
    else this.pending.set(slot, { keyId, month, requests: 1 });
  }

  /** Flushes every USAGE_FLUSH_MS until close(). */
  start(intervalMs: number): void {
    this.poller ??= new PollingWorker({
      tick: () => this.flush(),
      intervalMs,
      onError: () => undefined, // flush() never rejects: it logs and keeps the counts
    });
    this.poller.start(intervalMs);
  }

  /** Writes the counts not written yet. Never rejects: a failed write is kept for the next one. */
  flush(): Promise<void> {
    const run = this.tail.then(() => this.writePending());
    this.tail = run;
    return run;
  }

  async close(): Promise<void> {
    await this.poller?.stop();
    await this.flush();
  }

  private unflushed(keyId: string, month: string): number {
    return this.pending.get(`${month} ${keyId}`)?.requests ?? 0;
  }

  private async writePending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      const deltas = [...batch.values()];
      const stored = await addMonthlyUsage(this.db, deltas);
      const totals = deltas.map((p, i) => ({ keyId: p.keyId, month: p.month, total: stored[i]! }));
      // The store's total also holds what other processes counted; add what arrived meanwhile.
      for (const { keyId, month, total } of totals) {
        const entry = this.used.get(keyId);
        if (entry && entry.month === month) entry.requests = total + this.unflushed(keyId, month);
      }
    } catch (err) {
      for (const [slot, p] of batch) {
        const later = this.pending.get(slot);
        if (later) later.requests += p.requests;
        else this.pending.set(slot, p);
      }
      this.logger.error({ err }, 'could not write monthly usage counts; will retry');
    }
  }
}
