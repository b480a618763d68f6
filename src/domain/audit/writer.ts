import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { StoreLocation } from '../../db/store.js';
import { startWorker } from '../../runtime/worker.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import type { AuditReply, AuditRequest, AuditTuple, AuditWorkerData } from './worker.js';

export type { AuditTuple } from './worker.js';

export interface AuditWriterOptions {
  /** The store; the writer thread opens its own connection to it (openStoreAt). */
  location: StoreLocation;
  /** Hand queued entries to the writer thread this often (AUDIT_FLUSH_MS). */
  flushMs: number;
  /** ...or as soon as this many entries wait (AUDIT_FLUSH_ROWS). */
  flushRows: number;
  /** Entries older than this many days are deleted (AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  now: () => Date;
  /** While the store refuses writes, keep at most this many entries, dropping the oldest. */
  maxQueued?: number;
}

// Entries cross to the writer thread in small batches, so no hand-over pauses the event loop
// for long; the thread commits far less often (see AuditWriter).
const HANDOFF_ROWS = 400;
const SWEEP_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The audit log's writer. A request only pushes its entry (a tuple of primitives) onto a
 * queue, handed to a writer thread in batches of up to 400. The thread has a connection of
 * its own and commits every `flushMs` or once `flushRows` entries wait, not per batch: each
 * commit from another connection makes the request thread's connection drop its page cache
 * (measured: about 400 extra page reads a commit), so commits stay rare. close() (on graceful
 * shutdown) writes everything queued. A crash loses at most the last interval.
 */
export class AuditWriter {
  private batch: AuditTuple[] = [];
  private readonly worker: Worker;
  private readonly waiting = new Map<
    number,
    { resolve: (n: number) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;
  private readonly flusher: PollingWorker;
  private readonly sweeper: PollingWorker;
  private closed: Promise<void> | undefined;
  private exitError: Error | undefined;
  private readonly ready: Promise<void>;
  private readonly handoffRows: number;

  constructor(
    private readonly logger: Logger,
    private readonly options: AuditWriterOptions,
  ) {
    this.handoffRows = Math.min(HANDOFF_ROWS, options.flushRows);
    // Sent even when empty: the thread retries entries the store refused earlier.
    this.flusher = new PollingWorker({
      tick: () => this.send(true, true),
      intervalMs: options.flushMs,
      onError: (err) => this.logger.error({ err }, 'audit log: could not hand entries over'),
    });
    // A failed sweep is logged by sweep() and tried again at the next.
    this.sweeper = new PollingWorker({
      tick: async () => {
        await this.sweep();
      },
      intervalMs: SWEEP_EVERY_MS,
      onError: () => undefined,
    });
    const data: AuditWorkerData = {
      auditWorker: true,
      location: options.location,
      flushRows: options.flushRows,
      maxQueued: options.maxQueued ?? 100_000,
    };
    // From build/ the compiled worker.js; in the one-file binary the bundle scripts/dist.mjs names.
    this.worker = startWorker('audit-worker.cjs', new URL('./worker.js', import.meta.url), {
      workerData: data,
    });
    // The thread never keeps a process alive by itself; close() is the way to stop it.
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (reply: AuditReply) => {
        if (reply.type === 'ready') resolve();
        else this.onReply(reply);
      });
      this.worker.on('error', (err) => {
        this.logger.error({ err }, 'audit log: the writer thread failed');
        reject(err);
        this.failAll(err);
      });
      this.worker.on('exit', (code) => {
        this.exitError = new Error(`the audit writer thread exited (${code})`);
        reject(this.exitError);
        this.failAll(this.exitError);
      });
    });
    // Whoever awaits start() hears of a failed start; nobody else needs to.
    this.ready.catch(() => undefined);
  }

  /** Queues one entry. Never waits on the store. */
  record(entry: AuditTuple): void {
    this.batch.push(entry);
    if (this.batch.length >= this.handoffRows) this.send(false);
  }

  /**
   * Waits for the writer thread to have its connection, then starts the flush timer and the
   * retention sweep (now, then hourly). Rejects when the thread cannot start.
   */
  async start(): Promise<void> {
    await this.ready;
    this.flusher.start(this.options.flushMs);
    this.sweeper.start();
  }

  /**
   * Resolves once every entry recorded so far is in the store. Resolves to how many entries the
   * store refused and the thread still holds for a retry (0 when all is written).
   */
  flush(): Promise<number> {
    this.send(false);
    return this.request((id) => ({ type: 'flush', id }));
  }

  /** Deletes entries older than the retention period. Resolves to how many went. */
  async sweep(): Promise<number> {
    const before = new Date(this.options.now().getTime() - this.options.retentionDays * DAY_MS);
    try {
      const n = await this.request((id) => ({ type: 'sweep', id, before: before.toISOString() }));
      if (n > 0) this.logger.info({ deleted: n, before }, 'audit log: old entries deleted');
      return n;
    } catch (err) {
      this.logger.error({ err }, 'audit log: retention sweep failed; will retry');
      throw err;
    }
  }

  /** Writes everything queued, then stops the thread. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      await this.flusher.stop();
      // A sweep under way is answered before the close (the thread takes requests in turn).
      void this.sweeper.stop();
      this.send(false);
      try {
        const left = await this.request((id) => ({ type: 'close', id }));
        if (left > 0)
          this.logger.error({ lost: left }, 'audit log: entries not written at shutdown');
      } catch (err) {
        this.logger.error({ err }, 'audit log: could not write the last entries');
      }
      await this.worker.terminate();
    })());
  }

  /** Hands the queued entries over; `write` has the thread commit what it holds now. */
  private send(write: boolean, evenIfEmpty = false): void {
    if (this.batch.length === 0 && !evenIfEmpty) return;
    if (this.exitError) return;
    const message: AuditRequest = {
      type: 'rows',
      json: JSON.stringify(this.batch),
      count: this.batch.length,
      write,
    };
    this.worker.postMessage(message);
    this.batch = [];
  }

  private request(make: (id: number) => AuditRequest): Promise<number> {
    if (this.exitError) return Promise.reject(this.exitError);
    const id = ++this.nextId;
    return new Promise<number>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage(make(id));
    });
  }

  private onReply(reply: AuditReply): void {
    if (reply.type === 'ready') return;
    if (reply.type === 'log') {
      this.logger[reply.level](reply.data, reply.message);
      return;
    }
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (reply.type === 'done') waiter.resolve(reply.value);
    else waiter.reject(new Error(reply.message));
  }

  private failAll(err: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}
