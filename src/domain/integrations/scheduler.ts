import { createTask } from 'node-cron';
import type { Logger } from 'pino';
import { listAllIntegrationRows } from '../../db/queries/integrations.js';
import { AppError } from '../../errors.js';
import type { SyncRunner } from './sync.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import type { WorkShare } from '../workers/registry.js';

export interface SyncScheduler {
  /**
   * Looks at the clock: when SYNC_CRON matched a second since the last look (at most five
   * minutes back), starts a sync of every integration not paused. Returns the run ids started.
   * The timer calls it every second; tests call it after moving their clock.
   */
  tick(): Promise<string[]>;
  stop(): Promise<void>;
}

const LOOK_BACK_S = 300;

/**
 * Syncs on SYNC_CRON inside `serve`. The schedule is read against the injected clock (so a
 * test moves time instead of waiting for it); an integration whose sync is still running
 * (here or in another process) is skipped until the next match. With several processes on one
 * store, each starts the syncs of its share of the integrations (`workers`), so they spread
 * over the processes instead of all going to the first to see the match.
 */
export function startSyncScheduler(options: {
  runner: SyncRunner;
  cron: string;
  logger: Logger;
  now: () => Date;
  /** How often the clock is read (default every second; 0: only when tick() is called). */
  intervalMs?: number;
  /** The integrations this process syncs on schedule, among several (default: all of them). */
  workers?: WorkShare;
}): SyncScheduler {
  const { runner, logger, now } = options;
  const task = createTask(options.cron, () => undefined, { name: 'agentshelf-sync' });
  let lastSecond = Math.floor(now().getTime() / 1000);
  let stopped = false;
  let ticking: Promise<string[]> | undefined;

  const due = (): boolean => {
    const second = Math.floor(now().getTime() / 1000);
    let matched = false;
    for (let s = Math.max(lastSecond + 1, second - LOOK_BACK_S); s <= second && !matched; s++) {
      matched = task.match(new Date(s * 1000));
    }
    lastSecond = Math.max(lastSecond, second);
    return matched;
  };

  const fire = async (): Promise<string[]> => {
    const started: string[] = [];
    const rows = (await listAllIntegrationRows(runner.env.db)).filter(
      (row) => row.status !== 'disconnected',
    );
    // Each live process starts its share: the syncs of one match run side by side.
    const mine = options.workers?.share(rows.map((row) => row.id));
    for (const row of rows) {
      if (stopped) break;
      if (mine && !mine.has(row.id)) continue;
      try {
        const { run } = await runner.start(row.id, { trigger: 'schedule' });
        started.push(run.id);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'conflict') {
          logger.info({ integration: row.id }, 'scheduled sync skipped: one is running');
        } else if (!stopped) {
          logger.error({ err, integration: row.id }, 'scheduled sync not started');
        }
      }
    }
    return started;
  };

  const tick = async (): Promise<string[]> => {
    if (stopped || ticking) return [];
    if (!due()) return [];
    ticking = fire().finally(() => (ticking = undefined));
    return ticking;
  };

  const interval = options.intervalMs ?? 1000;
  const poller = new PollingWorker({
    tick: async () => {
      await tick();
    },
    intervalMs: interval,
    onError: (err) => logger.error({ err }, 'sync schedule failed'),
  });
  if (interval > 0) poller.start(interval);

  return {
    tick,
    async stop() {
      stopped = true;
      await poller.stop();
      await ticking;
      await task.destroy();
    },
  };
}
