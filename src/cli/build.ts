import { loadConfig } from '../config.js';
import { openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { feedsUrlChange } from '../../pipeline/discovery/index.js';
import { PipelineBusyError } from '../../pipeline/lock.js';
import { defaultStages, openPipelineContext, runPipeline } from '../../pipeline/run.js';
import { intFlag, parseVerbArgs } from './args.js';
import { createProgress } from './progress.js';

export const buildHelp = `Usage: agentshelf build [--wait SECONDS] [--json]

Runs the pipeline once: generates every active or processing feed into DATA_DIR/feeds/
(JSON, CSV or XML, each with a .gz sibling and a diagnostics file), publishing each file
atomically; a feed whose content did not change is left as it was.

If another run is in progress (serve's schedule, or another build), waits for it to end.
First removes the temporaries a killed run left, and warns on stderr when FEEDS_URL differs
from the one the published registry was built with (this run then rewrites every URL).
Settings come from the environment, then from ./.env for the variables not set.

  --wait SECONDS  Longest wait for a run in progress (default 600; 0 fails at once).
  --json          Prints one JSON object: run id, status, per-feed figures, failures,
                  duration and peak memory.

On a terminal, shows progress on stderr (products/s and ETA); otherwise prints one line
per feed. Ctrl-C (or SIGTERM) stops the run and leaves the published files as they were.
Exit status: 0 when every feed was published, 1 when one failed (named on stderr) or another
run held the lock longer than --wait, 2 for a usage error, 130 when interrupted.`;

export async function runBuild(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, { wait: { type: 'string' } });
  if (values.help) {
    console.log(buildHelp);
    return 0;
  }
  const waitSeconds = intFlag(values.wait, 'wait', 0) ?? 600;
  const config = loadConfig();
  // stdout is the summary (or JSON); logs go to stderr, quiet unless LOG_LEVEL asks.
  const logger = createLogger(process.env.LOG_LEVEL ? config.LOG_LEVEL : 'warn', {
    toStderr: true,
  });
  const store = openStore(config);
  const tty = Boolean(process.stderr.isTTY) && !values.json;
  const progress = createProgress(process.stderr, 'products');
  // Ctrl-C or SIGTERM stops the run cleanly: temporaries removed, lock released.
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const { ctx, close } = openPipelineContext(
    store,
    { config, logger, signal: controller.signal },
    tty ? { progress: progress.update } : {},
  );
  try {
    await migrateToLatest(store.db);
    const change = await feedsUrlChange(config);
    if (change) console.error(`agentshelf build: warning: ${change}`);
    const result = await runPipeline(ctx, defaultStages, {
      trigger: 'build',
      waitMs: waitSeconds * 1000,
      sweep: true,
    });
    if (tty) progress.clear();
    if (values.json) {
      console.log(
        JSON.stringify({
          run_id: result.id,
          status: result.status,
          duration_ms: Math.round(result.ms),
          peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
          stages: result.stages,
          failures: result.failures,
        }),
      );
    } else {
      for (const stage of result.stages) for (const line of stage.summary) console.log(line);
    }
    if (result.failures.length) {
      console.error(`agentshelf build: failed: ${result.failures.join(', ')}`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (tty) progress.clear();
    if (err instanceof PipelineBusyError) {
      console.error(`agentshelf build: ${err.message}; gave up after ${waitSeconds} s`);
      return 1;
    }
    if (controller.signal.aborted) {
      console.error('agentshelf build: interrupted; published files are as they were');
      return 130;
    }
    throw err;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await close();
    await store.close();
    logger.flush();
  }
}
