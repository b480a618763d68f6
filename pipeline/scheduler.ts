import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { Config } from '../src/config.js';
import type { Store } from '../src/db/store.js';
import { feedsUrlChange } from './discovery/index.js';
import { PipelineBusyError } from './lock.js';
import { defaultStages, openPipelineContext, runPipeline, type OpenedContext } from './run.js';
import type { Stage } from './stage.js';
import { findStaleReason } from './staleness.js';
import { sweepStaleTemporaries } from './sweep.js';

/** How long a scheduled run waits for a run held by another process (a long `build`). */
const LOCK_WAIT_MS = 10 * 60_000;
/** Changes that keep coming push a debounced run back by at most this many delays. */
const MAX_DEBOUNCES = 10;

export interface SchedulerOptions {
  store: Store;
  config: Config;
  logger: Logger;
  now?: () => Date;
  stages?: Stage[];
}

export interface PipelineScheduler {
  /**
   * Asks for a run: at once (or right after the run in progress) after a quiet spell (no
   * request for FEEDS_DEBOUNCE_MS), so one change reaches the registry and the CDN in about a
   * run's time; otherwise FEEDS_DEBOUNCE_MS from now, each further request within the delay
   * pushing it back, up to ten delays after the first, so a stream of edits is gathered into
   * few runs and still gets published.
   */
  requestRun(trigger: string): void;
  /** Stops the schedule and the debounce, aborts a run in progress and waits for it to end. */
  stop(): Promise<void>;
}

/**
 * The pipeline inside `serve`: on FEEDS_CRON, a few seconds after products or feeds change,
 * and once at start when the published output is stale. Runs of this process are queued one
 * after another (requests during a run coalesce into one more run); the pipeline lock keeps
 * them from overlapping runs of other processes.
 */
export function startPipelineScheduler(options: SchedulerOptions): PipelineScheduler {
  const { store, config, logger } = options;
  const stages = options.stages ?? defaultStages;
  const controller = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let firstRequestAt: number | undefined;
  let lastRequestAt = -Infinity;
  let requested = '';
  let active: Promise<void> | undefined;
  let queued: string | undefined;

  const runOnce = async (trigger: string) => {
    // Everything, opening the run's reader included, is inside the try: a run that cannot
    // start is logged like one that failed, never left as a rejected promise for stop() or
    // the process to trip on.
    let opened: OpenedContext | undefined;
    try {
      opened = openPipelineContext(store, {
        config,
        logger,
        ...(options.now ? { now: options.now } : {}),
        signal: controller.signal,
      });
      const result = await runPipeline(opened.ctx, stages, { trigger, waitMs: LOCK_WAIT_MS });
      const log = { run: result.id, trigger, ms: Math.round(result.ms), failures: result.failures };
      if (result.status === 'succeeded') logger.info(log, 'pipeline run succeeded');
      else logger.error(log, 'pipeline run failed');
    } catch (err) {
      if (controller.signal.aborted) logger.info({ trigger }, 'pipeline run stopped by shutdown');
      else if (err instanceof PipelineBusyError) logger.warn({ trigger }, err.message);
      else logger.error({ err, trigger }, 'pipeline run crashed');
    } finally {
      await opened
        ?.close()
        .catch((err: unknown) => logger.warn({ err, trigger }, "closing the run's reader failed"));
    }
  };

  const kick = (trigger: string) => {
    if (stopped) return;
    if (active) {
      queued = trigger;
      return;
    }
    active = runOnce(trigger).finally(() => {
      active = undefined;
      const next = queued;
      queued = undefined;
      if (next !== undefined) kick(next);
    });
  };

  const delay = config.FEEDS_DEBOUNCE_MS;
  const requestRun = (trigger: string) => {
    if (stopped) return;
    const now = Date.now();
    // A run in progress does not count: the request then runs right after it (kick queues it).
    const quiet = timer === undefined && now - lastRequestAt >= delay;
    lastRequestAt = now;
    firstRequestAt ??= now;
    requested = trigger;
    clearTimeout(timer);
    const wait = quiet
      ? 0
      : Math.max(0, Math.min(delay, firstRequestAt + delay * MAX_DEBOUNCES - now));
    timer = setTimeout(() => {
      timer = undefined;
      firstRequestAt = undefined;
      kick(requested);
    }, wait);
  };

  const task: ScheduledTask = cron.schedule(config.FEEDS_CRON, () => kick('cron'), {
    name: 'agentshelf-pipeline',
    logger: {
      info: (message) => logger.debug({ cron: config.FEEDS_CRON }, message),
      warn: (message) => logger.warn({ cron: config.FEEDS_CRON }, message),
      error: (message, err) => logger.error({ err: err ?? message }, 'cron error'),
      debug: (message) => logger.debug({ cron: config.FEEDS_CRON }, String(message)),
    },
  });

  const startCheck = (async () => {
    // A killed run's temporaries would otherwise stay until the next run after it (and go
    // to a CDN with an upload of PUBLIC_DIR in between).
    const swept = await sweepStaleTemporaries(store.db, config);
    if (swept) logger.info({ files: swept }, 'removed temporaries a killed run left');
    const change = await feedsUrlChange(config);
    if (change) logger.warn({ feedsUrl: config.FEEDS_URL }, change);
    const reason = await findStaleReason(store.db, config);
    if (reason === undefined) return;
    logger.info({ reason }, 'published output is stale: running the pipeline');
    kick('start');
  })().catch((err: unknown) => logger.error({ err }, 'could not tell whether the output is stale'));

  return {
    requestRun,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      await task.destroy();
      controller.abort();
      await startCheck;
      await active;
    },
  };
}
