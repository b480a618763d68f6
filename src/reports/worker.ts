import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Store } from '../db/store.js';
import type { ReportRow } from '../db/schema.js';
import {
  claimReport,
  findOldestPendingReport,
  listReportFiles,
  updateReportRow,
} from '../db/queries/reports.js';
import { storedTimestamp } from '../db/timestamps.js';
import { AppError } from '../errors.js';
import { FsPublisher } from '../publish/fs.js';
import type { OpenFile } from '../publish/publisher.js';
import { generateReport } from './generate.js';
import type { ReportSources } from '../domain/reports/content.js';
import {
  REPORT_CONTENT_TYPES,
  removeReportFile,
  removeStaleTemporaries,
  reportFileName,
  reportsDirectory,
} from '../domain/reports/files.js';
import { PollingWorker } from '../runtime/polling-worker.js';

/**
 * Generations a report may start. A process killed while generating leaves the report
 * pending with its attempt counted; the next start picks it again, and a report that was
 * interrupted this many times (it may be what kills the process) fails instead.
 */
export const MAX_REPORT_ATTEMPTS = 3;

export interface ReportWorkerOptions {
  store: Store;
  dataDir: string;
  storeName: string;
  currency: string;
  logger: Logger;
  now: () => Date;
  sources: ReportSources;
  /** How often the store is looked at when nothing announced a new report (default 1 s). */
  pollMs?: number;
  /** Products per page of the products report (default 1000). */
  pageSize?: number;
}

/** Why a generation failed, as the report shows it: never internals. */
function failureReason(err: unknown): string {
  if (err instanceof AppError) return err.message;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return `could not write the report file (${code})`;
  }
  return 'unexpected error while generating the report; the server log has the details';
}

/**
 * The background generator `serve` runs: takes the oldest pending report, writes its file
 * (temporary, then renamed), marks it ready or failed, and looks again. One report at a time.
 * Only one process should run a worker per store; two would still not generate a report
 * twice at once (claimReport), but each would clear the other's temporaries at start.
 */
export class ReportWorker {
  private readonly abort = new AbortController();
  private readonly poller: PollingWorker;
  private running = false;
  private stopping: Promise<void> | undefined;

  /** Where report files go: DATA_DIR/reports, through the one output sink (src/publish/). */
  private readonly publisher: FsPublisher;

  constructor(private readonly options: ReportWorkerOptions) {
    this.publisher = new FsPublisher(reportsDirectory(options.dataDir));
    this.poller = new PollingWorker({
      tick: () => this.next(),
      intervalMs: options.pollMs ?? 1000,
      onError: (err) =>
        this.options.logger.error({ err }, 'report worker: reading pending reports failed'),
    });
  }

  /** Clears what a killed process left (temporaries, orphan files), then starts working. */
  async start(): Promise<void> {
    if (this.running || this.stopping) return;
    await removeStaleTemporaries(this.options.dataDir);
    await this.removeOrphanFiles();
    this.running = true;
    this.poller.start();
  }

  /** Look for pending reports now (one was just requested). */
  nudge(): void {
    this.poller.nudge();
  }

  /**
   * Stops: a generation under way is abandoned (its temporary removed) and its report stays
   * pending, to be generated again at the next start.
   */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      this.running = false;
      const stopped = this.poller.stop();
      this.abort.abort();
      await stopped;
    })());
  }

  /** Handles the oldest pending report; returns whether there may be more. */
  private async next(): Promise<boolean> {
    const { store } = this.options;
    const row = await findOldestPendingReport(store.db);
    if (!row) return false;
    const now = this.options.now();
    if (row.attempts >= MAX_REPORT_ATTEMPTS) {
      await updateReportRow(store.db, row.id, {
        status: 'failed',
        failure_reason: `generation was interrupted ${row.attempts} times (the server stopped while generating it)`,
        finished_at: storedTimestamp(now),
      });
      return true;
    }
    if (!(await claimReport(store.db, row, storedTimestamp(now)))) return true;
    await this.generate({ ...row, attempts: row.attempts + 1 });
    return true;
  }

  private async generate(row: ReportRow): Promise<void> {
    const { store, dataDir, logger } = this.options;
    let writer: OpenFile | undefined;
    const reader = store.openReader();
    try {
      // Written under a temporary name, flushed to the disk, then renamed into place.
      const file = this.publisher.open(reportFileName(row.id, row.format), {
        contentType: REPORT_CONTENT_TYPES[row.format],
        gzip: false,
        durable: true,
      });
      writer = file;
      const sink = {
        write: async (text: string) => {
          if (text.length === 0) return;
          const wait = file.write(text);
          if (wait) await wait;
        },
      };
      await reader.transaction().execute((trx) =>
        generateReport(row, sink, {
          db: trx,
          sources: this.options.sources,
          storeName: this.options.storeName,
          currency: this.options.currency,
          now: this.options.now(),
          signal: this.abort.signal,
          ...(this.options.pageSize ? { pageSize: this.options.pageSize } : {}),
        }),
      );
      const { bytes } = await file.commit();
      writer = undefined;
      await this.publisher.commit();
      const kept = await updateReportRow(store.db, row.id, {
        status: 'ready',
        bytes,
        failure_reason: null,
        finished_at: storedTimestamp(this.options.now()),
      });
      // Deleted while it was being generated: the file has no report.
      if (!kept) await removeReportFile(dataDir, row.id, row.format);
    } catch (err) {
      await writer?.abort();
      if (this.abort.signal.aborted) {
        // Stopped, not failed: generated again at the next start, this attempt not counted.
        await updateReportRow(store.db, row.id, { attempts: row.attempts - 1, started_at: null });
        return;
      }
      logger.error({ err, report: row.id }, 'report generation failed');
      await updateReportRow(store.db, row.id, {
        status: 'failed',
        failure_reason: failureReason(err),
        finished_at: storedTimestamp(this.options.now()),
      });
    } finally {
      await reader.destroy();
    }
  }

  /** Removes report files whose report is gone (deleted while a killed process generated it). */
  private async removeOrphanFiles(): Promise<void> {
    let names: string[];
    try {
      names = await fs.promises.readdir(reportsDirectory(this.options.dataDir));
    } catch (err) {
      if (
        (err as NodeJS.ErrnoException).code === 'ENOENT' ||
        (err as NodeJS.ErrnoException).code === 'ENOTDIR'
      )
        return;
      throw err;
    }
    const known = new Set(
      (await listReportFiles(this.options.store.db)).map((r) => `${r.id}.${r.format}`),
    );
    for (const name of names) {
      if (/^rpt_[A-Za-z0-9]+\.(csv|json|html)$/.test(name) && !known.has(name)) {
        await fs.promises.rm(path.join(reportsDirectory(this.options.dataDir), name), {
          force: true,
        });
      }
    }
  }
}
