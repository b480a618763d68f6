import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { NewAuditLogRow } from '../db/schema.js';
import { insertAuditEntries, ROWS_PER_INSERT, sweepAuditLog } from './audit-log.js';

export interface AuditWriterOptions {
  /** Write what is queued this often (AUDIT_FLUSH_MS). */
  flushMs: number;
  /** ...or as soon as this many entries wait (AUDIT_FLUSH_ROWS). */
  flushRows: number;
  /** Entries older than this many days are deleted (AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  now: () => Date;
  /** While the store refuses writes, keep at most this many entries, dropping the oldest. */
  maxQueued?: number;
}

const SWEEP_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The audit log's writer. A request only pushes its entry onto a queue; the entries reach
 * the store in one transaction per batch, every `flushMs` or `flushRows` entries, and on
 * close(). A crash loses at most the entries of the last interval.
 *
 * Writes (batches and the retention sweep) run one after another, so a reader that calls
 * flush() first sees every entry recorded before it.
 */
export class AuditWriter {
  private queue: NewAuditLogRow[] = [];
  private tail: Promise<unknown> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private flushSoon = false;
  private dropped = 0;
  private readonly maxQueued: number;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: AuditWriterOptions,
  ) {
    this.maxQueued = options.maxQueued ?? 100_000;
  }

  /** Queues one entry. Never waits on the store. */
  record(entry: NewAuditLogRow): void {
    this.queue.push(entry);
    if (this.queue.length >= this.options.flushRows && !this.flushSoon) {
      this.flushSoon = true;
      setImmediate(() => {
        this.flushSoon = false;
        void this.enqueue(() => this.writeQueued(false));
      });
    }
  }

  /** Starts the flush timer and the retention sweep (now, then hourly). */
  start(): void {
    this.flushTimer = setInterval(() => void this.flush(), this.options.flushMs);
    this.flushTimer.unref();
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  /** Writes every queued entry. Never rejects: a failed batch goes back to the queue. */
  flush(): Promise<void> {
    return this.enqueue(() => this.writeQueued(true));
  }

  /** Deletes entries older than the retention period. Resolves to how many went. */
  sweep(): Promise<number> {
    return this.enqueue(async () => {
      const before = new Date(this.options.now().getTime() - this.options.retentionDays * DAY_MS);
      try {
        const n = await sweepAuditLog(this.db, before);
        if (n > 0) this.logger.info({ deleted: n, before }, 'audit log: old entries deleted');
        return n;
      } catch (err) {
        this.logger.error({ err }, 'audit log: retention sweep failed; will retry');
        return 0;
      }
    });
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sweepTimer);
    await this.flush();
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.tail.then(job);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Writes the queue; with `all` false (a flush because the queue grew), only whole chunks of
   * ROWS_PER_INSERT, whose statement is prepared once, and the rest waits for the timer.
   */
  private async writeQueued(all: boolean): Promise<void> {
    const whole = Math.floor(this.queue.length / ROWS_PER_INSERT) * ROWS_PER_INSERT;
    const count = all || whole === 0 ? this.queue.length : whole;
    if (count === 0) return;
    const batch = this.queue.slice(0, count);
    this.queue = this.queue.slice(count);
    try {
      await insertAuditEntries(this.db, batch);
      if (this.dropped > 0) {
        this.logger.warn(
          { dropped: this.dropped },
          'audit log: entries were dropped while the store refused writes',
        );
        this.dropped = 0;
      }
    } catch (err) {
      this.queue = batch.concat(this.queue);
      const over = this.queue.length - this.maxQueued;
      if (over > 0) {
        this.queue.splice(0, over);
        this.dropped += over;
      }
      this.logger.error(
        { err, queued: this.queue.length },
        'audit log: could not write entries; will retry',
      );
    }
  }
}
