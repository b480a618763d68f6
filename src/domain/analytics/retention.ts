import type { Logger } from 'pino';
import { deleteInChunks } from '../../db/delete-in-chunks.js';
import { deleteInteractionsBefore } from '../../db/queries/analytics.js';
import type { Executor } from '../../db/transaction.js';
import { PollingWorker } from '../../runtime/polling-worker.js';

const DAY_MS = 86_400_000;

/**
 * Deletes raw interactions older than `before`, in chunks (deleteInChunks). The daily rollups
 * stay: every answer reads them.
 */
export async function purgeInteractions(db: Executor, before: Date, chunk = 5000): Promise<number> {
  const cutoff = before.toISOString();
  return deleteInChunks((n) => deleteInteractionsBefore(db, cutoff, n), chunk);
}

export interface AnalyticsRetention {
  /** Purges now: interactions older than ANALYTICS_RETENTION_DAYS before now(). */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

/** The daily purge inside serve: once at start, then every day. */
export function startAnalyticsRetention(options: {
  db: Executor;
  logger: Logger;
  now: () => Date;
  retentionDays: number;
  intervalMs?: number;
}): AnalyticsRetention {
  let running: Promise<number> | undefined;
  const sweep = () =>
    (running ??= purgeInteractions(
      options.db,
      new Date(options.now().getTime() - options.retentionDays * DAY_MS),
    )
      .then((n) => {
        if (n > 0) options.logger.info({ deleted: n }, 'analytics: purged old interactions');
        return n;
      })
      .catch((err: unknown) => {
        options.logger.error({ err }, 'analytics: purge failed; will retry');
        return 0;
      })
      .finally(() => {
        running = undefined;
      }));
  // Once a second after start, then every day.
  const poller = new PollingWorker({
    tick: async () => {
      await sweep();
    },
    intervalMs: options.intervalMs ?? DAY_MS,
    onError: () => undefined, // sweep() never rejects: a failed purge is logged there
  });
  poller.start(1000);
  return {
    sweep,
    stop: async () => {
      await poller.stop();
      await running;
    },
  };
}
