import { loadConfig } from '../config.js';
import { openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { feedsUrlChange } from '../../pipeline/discovery/index.js';
import { PipelineBusyError } from '../../pipeline/lock.js';
import { defaultStages, openPipelineContext, runPipeline } from '../../pipeline/run.js';
import { intFlag, parseVerbArgs } from './args.js';

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

/** One progress line: "feeds  120,000 / 300,000 products  98,000/s  ETA 2 s". */
export function formatProgress(
  update: { stage: string; done: number; total: number },
  elapsedMs: number,
): string {
  const done = Math.min(update.done, update.total || update.done);
  const rate = elapsedMs > 0 ? (done / elapsedMs) * 1000 : 0;
  const left = update.total - done;
  const eta = rate > 0 && left > 0 ? `ETA ${formatDuration((left / rate) * 1000)}` : '';
  const n = (v: number) => Math.round(v).toLocaleString('en');
  return `${update.stage}  ${n(done)} / ${n(update.total)} products  ${n(rate)}/s  ${eta}`.trimEnd();
}

function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

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
  const started = performance.now();
  let lastDrawn = 0;
  const progress = (update: { stage: string; done: number; total: number }) => {
    const now = performance.now();
    if (now - lastDrawn < 100 && update.done < update.total) return;
    lastDrawn = now;
    process.stderr.write(`\r\x1b[2K${formatProgress(update, now - started)}`);
  };
  // Ctrl-C or SIGTERM stops the run cleanly: temporaries removed, lock released.
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const { ctx, close } = openPipelineContext(
    store,
    { config, logger, signal: controller.signal },
    tty ? { progress } : {},
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
    if (tty) process.stderr.write('\r\x1b[2K');
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
    if (tty) process.stderr.write('\r\x1b[2K');
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
