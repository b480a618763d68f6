import { loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { recordPublication } from '../domain/publications/publications.js';
import { createLogger } from '../logger.js';
import { syncTree, type SyncReport } from '../publish/s3.js';
import { acquirePipelineLock, PipelineBusyError } from '../../pipeline/lock.js';
import { objectStorageSettings, purgeWiring } from '../../pipeline/object-storage.js';
import { intFlag, parseVerbArgs, UsageError } from './args.js';
import { createProgress } from './progress.js';

export const publishHelp = `Usage: agentshelf publish [--dry-run] [--force] [--wait SECONDS] [--json]

Uploads the published registry (PUBLIC_DIR, as the last pipeline run wrote it) to the bucket
PUBLISH_TARGET names (s3://BUCKET[/PREFIX]?endpoint=URL&region=R; keys from
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), alone, without running the pipeline. Every
pipeline run does the same when PUBLISH_TARGET is set; this verb repeats a failed upload,
shows what would change, or lets a large deletion through.

Only changed objects are uploaded: brand objects first (compressed siblings before plain
ones), then v1/index.json, then the home page. Objects the tree no longer holds are deleted
once PUBLISH_DELETE_GRACE has passed; more than PUBLISH_MAX_DELETES (or half the bucket)
need --force. v1/index.json is never deleted. Each run is listed by GET /v1/publications.

  --dry-run       Lists what would be uploaded and deleted; writes nothing.
  --force         Deletes what is due even past PUBLISH_MAX_DELETES or half the bucket.
  --wait SECONDS  Longest wait for a pipeline run in progress (default 600; 0 fails at once).
  --json          Prints one JSON object: uploaded, skipped, deleted, held, bytes, changed keys.

On a terminal, shows progress on stderr. Exit status: 0 when the bucket matches the tree,
1 when the upload failed (the error on stderr; the next run uploads what is missing) or
another run held the lock longer than --wait, 2 for a usage or configuration error.`;

export async function runPublish(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, {
    'dry-run': { type: 'boolean' },
    force: { type: 'boolean' },
    wait: { type: 'string' },
  });
  if (values.help) {
    console.log(publishHelp);
    return 0;
  }
  const waitSeconds = intFlag(values.wait, 'wait', 0) ?? 600;
  const config = loadConfig();
  const settings = objectStorageSettings(config);
  if (!settings)
    throw new UsageError('PUBLISH_TARGET is not set: there is no bucket to publish to');
  const logger = createLogger(process.env.LOG_LEVEL ? config.LOG_LEVEL : 'warn', {
    toStderr: true,
  });
  const store = openStore(config);
  const tty = Boolean(process.stderr.isTTY) && !values.json;
  const progress = createProgress(process.stderr, 'objects');
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    await migrateToLatest(store.db);
    // The pipeline writes the tree: no upload reads it half-written.
    const lock = await acquirePipelineLock(store.db, {
      waitMs: waitSeconds * 1000,
      signal: controller.signal,
    });
    let report: SyncReport;
    try {
      const now = () => new Date();
      const run = (afterUpload?: (changed: string[]) => Promise<void>) =>
        syncTree(settings, {
          signal: controller.signal,
          dryRun: values['dry-run'] === true,
          force: values.force === true,
          ...(afterUpload ? { afterUpload } : {}),
          ...(tty
            ? {
                progress: (p: { done: number; total: number }) =>
                  progress.update({ stage: 'publish', done: p.done, total: p.total }),
              }
            : {}),
        });
      report = values['dry-run']
        ? await run()
        : await recordPublication(
            store.db,
            {
              target: settings.target.label,
              trigger: 'publish',
              now,
              purge: purgeWiring(config, { signal: controller.signal, logger }),
            },
            run,
          );
    } finally {
      await lock.release();
    }
    if (tty) progress.clear();
    printReport(report, values.json === true);
    return 0;
  } catch (err) {
    if (tty) progress.clear();
    if (err instanceof PipelineBusyError) {
      console.error(`agentshelf publish: ${err.message}; gave up after ${waitSeconds} s`);
      return 1;
    }
    if (controller.signal.aborted) {
      console.error('agentshelf publish: interrupted; the bucket index is the previous one');
      return 130;
    }
    console.error(
      `agentshelf publish: failed: ${err instanceof Error ? err.message : String(err)}`,
    );
    return 1;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await store.close();
    logger.flush();
  }
}

function printReport(report: SyncReport, json: boolean): void {
  if (json) {
    console.log(
      JSON.stringify({
        target: report.target,
        dry_run: report.dryRun,
        uploaded: report.uploaded,
        skipped: report.skipped,
        deleted: report.deleted,
        held: report.held,
        pending_deletions: report.pending,
        bytes: report.bytes,
        changed: report.changed,
        orphans: report.orphans,
      }),
    );
    return;
  }
  const verb = report.dryRun ? 'would upload' : 'uploaded';
  const count = report.dryRun ? report.changed.length : report.uploaded;
  console.log(
    `publish: ${report.target}: ${verb} ${count} objects (${report.bytes} bytes), ${report.skipped} unchanged, ${report.dryRun ? 'would delete' : 'deleted'} ${report.deleted}, ${report.pending} waiting for the grace`,
  );
  if (report.dryRun) for (const key of report.changed) console.log(`  upload ${key}`);
  if (report.held)
    console.error(
      `agentshelf publish: ${report.held} deletions held (more than PUBLISH_MAX_DELETES or half the bucket); run with --force to delete them`,
    );
}
