import type { Logger } from 'pino';
import type { Db } from '../../db/store.js';
import type { AccessRecord } from '../../domain/analytics/access-record.js';
import { recordAccess } from '../../domain/analytics/interactions.js';
import { PollingWorker } from '../../runtime/polling-worker.js';

export interface RequestLogOptions {
  /** How often queued requests are written. */
  flushMs?: number;
  /** A batch this large is written at once. */
  batchSize?: number;
  /** Past this many queued records (the store is stuck), new ones are counted and dropped. */
  maxQueued?: number;
  /** DEFAULT_CURRENCY, for the analytics store. */
  currency?: string;
}

/**
 * Records served requests as analytics interactions, in batches: a request only pushes a
 * record in memory, and one transaction a second (or per batch) classifies and writes them
 * with their rollups (analytics/interactions.ts recordAccess), so recording does not slow
 * serving. Used by the discovery server and the feed export.
 */
export class RequestLog {
  private queue: AccessRecord[] = [];
  private writing: Promise<void> | undefined;
  private readonly poller: PollingWorker;
  private readonly batchSize: number;
  private readonly maxQueued: number;
  /** Records dropped because the queue was full. */
  dropped = 0;
  /** Records written so far. */
  stored = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: RequestLogOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1000;
    this.maxQueued = options.maxQueued ?? 100_000;
    const flushMs = options.flushMs ?? 1000;
    this.poller = new PollingWorker({
      tick: () => this.flush(),
      intervalMs: flushMs,
      onError: () => undefined, // flush() never rejects: a failed write is logged there
    });
    this.poller.start(flushMs);
  }

  record(record: AccessRecord): void {
    if (this.queue.length >= this.maxQueued) {
      this.dropped++;
      return;
    }
    this.queue.push(record);
    if (this.queue.length >= this.batchSize && !this.writing) void this.flush();
  }

  /** Writes everything queued so far (after any write already under way). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    const records = this.queue;
    this.queue = [];
    this.writing = recordAccess(this.db, records, {
      ...(this.options.currency ? { currency: this.options.currency } : {}),
    })
      .then((result) => {
        this.stored += result.stored;
      })
      .catch((err: unknown) => {
        this.logger.error({ err, rows: records.length }, 'analytics: could not record requests');
      })
      .finally(() => {
        this.writing = undefined;
      });
    await this.writing;
  }

  async close(): Promise<void> {
    await this.poller.stop();
    await this.flush();
  }
}
