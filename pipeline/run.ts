import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../src/config.js';
import {
  finishPipelineRun,
  insertPipelineRun,
  interruptRunningPipelineRuns,
} from '../src/db/queries/pipeline-runs.js';
import type { Store } from '../src/db/store.js';
import type { PipelineRunStatus } from '../src/db/schema.js';
import { publishDiscovery } from './discovery/index.js';
import { feedsStage } from './feeds-stage.js';
import { acquirePipelineLock } from './lock.js';
import { objectStorageSettings, objectStoragePublisher } from './object-storage.js';
import { messageOf, type PipelineContext, type Stage, type StageResult } from './stage.js';
import { readCatalogueVersion, settingsHash } from './staleness.js';

/** The stages of a run, in order: the merchant's feeds, then the discovery registry. */
export const defaultStages: Stage[] = [feedsStage, publishDiscovery];

export interface RunOptions {
  /** What started the run (recorded): build, cron, start, products changed, feeds changed. */
  trigger?: string;
  /** How long to wait for a run already in progress (ms); 0 fails at once. */
  waitMs?: number;
  /** Stages remove stale temporaries even when no earlier run was left unfinished. */
  sweep?: boolean;
}

export interface PipelineRunResult {
  /** pipeline_runs.id */
  id: number;
  status: 'succeeded' | 'failed';
  stages: StageResult[];
  failures: string[];
  ms: number;
}

/**
 * One pipeline run: takes the pipeline lock (waiting up to `waitMs` for a run in progress,
 * here or in another process), records the run, runs each stage in turn, and records the
 * outcome. A stage that throws is a failure of that stage; the next stages still run.
 * When ctx.signal aborts, the run stops, is recorded as aborted, and the abort is rethrown.
 */
export async function runPipeline(
  ctx: PipelineContext,
  stages: Stage[] = defaultStages,
  options: RunOptions = {},
): Promise<PipelineRunResult> {
  const lock = await acquirePipelineLock(ctx.db, {
    waitMs: options.waitMs ?? 0,
    signal: ctx.signal,
  });
  try {
    const startedAt = ctx.now().toISOString();
    // We hold the lock, so a run still marked running belongs to a holder that died, and
    // whatever temporaries it was writing are stale: the stages sweep them first.
    const interrupted = await interruptRunningPipelineRuns(ctx.db, startedAt);
    const sweep = options.sweep === true || interrupted > 0;
    const stageCtx: PipelineContext = sweep ? { ...ctx, sweepTemporaries: true } : ctx;
    const id = await insertPipelineRun(ctx.db, {
      trigger: options.trigger ?? 'build',
      status: 'running',
      started_at: startedAt,
      catalogue_version: await readCatalogueVersion(ctx.db),
      settings_hash: settingsHash(ctx.config),
      pid: process.pid,
      hostname: os.hostname(),
    });
    const started = performance.now();
    const results: StageResult[] = [];
    let status: PipelineRunStatus = 'succeeded';
    for (const stage of stages) {
      try {
        results.push(await stage(stageCtx));
      } catch (err) {
        if (ctx.signal?.aborted) {
          status = 'aborted';
          break;
        }
        const name = stage.name || 'stage';
        ctx.logger.error({ err, stage: name }, 'pipeline stage failed');
        results.push({
          stage: name,
          summary: [`${name} failed: ${messageOf(err)}`],
          failures: [name],
        });
      }
    }
    const failures = results.flatMap((r) => r.failures);
    if (status !== 'aborted' && failures.length) status = 'failed';
    if (lock.lost) ctx.logger.error({ run: id }, 'pipeline lock lost during the run');
    await finishPipelineRun(ctx.db, id, {
      status,
      finished_at: ctx.now().toISOString(),
      summary: JSON.stringify(results),
      error: failures.length ? failures.join('; ') : null,
    });
    if (status === 'aborted') ctx.signal!.throwIfAborted();
    return {
      id,
      status: status === 'succeeded' ? 'succeeded' : 'failed',
      stages: results,
      failures,
      ms: performance.now() - started,
    };
  } finally {
    await lock.release();
  }
}

export interface OpenedContext {
  ctx: PipelineContext;
  /** Closes the read-only connection (the store stays open). */
  close(): Promise<void>;
}

/**
 * A pipeline context over a store, with its own read-only connection for streaming. With
 * PUBLISH_TARGET set, the discovery stage writes through the object-storage Publisher: the
 * tree on disk as before, then the bucket brought to it at the end of the stage.
 */
export function openPipelineContext(
  store: Store,
  base: { config: Config; logger: Logger; now?: () => Date; signal?: AbortSignal },
  extra: Pick<PipelineContext, 'progress'> = {},
): OpenedContext {
  const reader = store.openReader();
  const bucket = objectStorageSettings(base.config);
  const signal = base.signal ? { signal: base.signal } : {};
  const now = base.now ?? (() => new Date());
  const ctx: PipelineContext = {
    db: store.db,
    reader,
    config: base.config,
    logger: base.logger,
    now,
    ...signal,
    ...(bucket
      ? {
          output: {
            discovery: objectStoragePublisher(store.db, base.config, bucket, {
              now,
              signal: base.signal,
              logger: base.logger,
            }),
          },
        }
      : {}),
    ...extra,
  };
  return { ctx, close: () => reader.destroy() };
}
