import type { Logger } from 'pino';
import type { Db } from '../../db/store.js';
import { insertDiscoveryRequests } from '../../db/queries/discovery.js';
import type { NewDiscoveryRequestRow } from '../../db/schema.js';

export interface RequestLogOptions {
  /** How often queued requests are written. */
  flushMs?: number;
  /** A batch this large is written at once. */
  batchSize?: number;
  /** Past this many queued rows (the store is stuck), new ones are counted and dropped. */
  maxQueued?: number;
}

/**
 * Records served requests in batches: a request only pushes a row in memory, and one
 * multi-row insert a second (or per batch) writes them, so recording does not slow serving.
 */
export class RequestLog {
  private queue: NewDiscoveryRequestRow[] = [];
  private writing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  private readonly maxQueued: number;
  /** Rows dropped because the queue was full. */
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    options: RequestLogOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1000;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.timer = setInterval(() => void this.flush(), options.flushMs ?? 1000);
    this.timer.unref();
  }

  record(row: NewDiscoveryRequestRow): void {
    if (this.queue.length >= this.maxQueued) {
      this.dropped++;
      return;
    }
    this.queue.push(row);
    if (this.queue.length >= this.batchSize && !this.writing) void this.flush();
  }

  /** Writes everything queued so far (after any write already under way). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    const rows = this.queue;
    this.queue = [];
    this.writing = insertDiscoveryRequests(this.db, rows)
      .catch((err: unknown) => {
        this.logger.error({ err, rows: rows.length }, 'discovery: could not record requests');
      })
      .finally(() => {
        this.writing = undefined;
      });
    await this.writing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
