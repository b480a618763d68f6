import type { Logger } from 'pino';
import { foldCounterDeltas } from '../../db/queries/products.js';
import type { Executor } from '../../db/transaction.js';
import { PollingWorker } from '../../runtime/polling-worker.js';

/** How often serve folds the counters' deltas into their base rows. */
export const COUNTER_FOLD_MS = 10_000;

/**
 * The counters' fold inside serve (db/queries/products.ts, foldCounterDeltas): every
 * COUNTER_FOLD_MS, so the delta rows stay few (one a writer connection and counter at most).
 * Counts read the same before and after; a failed fold is logged and retried at the next.
 */
export function startCounterFold(options: { db: Executor; logger: Logger; intervalMs?: number }): {
  stop(): Promise<void>;
} {
  const poller = new PollingWorker({
    tick: () => foldCounterDeltas(options.db),
    intervalMs: options.intervalMs ?? COUNTER_FOLD_MS,
    onError: (err) => options.logger.warn({ err }, 'counters: fold failed; will retry'),
  });
  poller.start(options.intervalMs ?? COUNTER_FOLD_MS);
  return { stop: () => poller.stop() };
}
