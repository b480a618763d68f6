import { loadConfig } from '../config.js';
import { openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import { listAllIntegrationRows } from '../db/queries/integrations.js';
import { findRunningSync } from '../db/queries/integrations.js';
import { presentIntegration } from '../domain/integrations/present.js';
import { rotateSecretKey } from '../domain/integrations/rotate.js';
import { SecretBox } from '../domain/integrations/secret-box.js';
import { platformSources } from '../platforms/index.js';
import { recoverInterruptedSyncs, SyncRunner } from '../domain/integrations/sync.js';
import { AppError } from '../errors.js';
import { createLogger } from '../logger.js';
import { parseVerbArgs, UsageError } from './args.js';
import { createProgress } from './progress.js';

export const integrationsHelp = `Usage: agentshelf integrations <list|sync|rotate-key> [options]

Platform integrations (Shopify, WooCommerce, feed URLs). Connect one with the API
(POST /v1/integrations, see docs/integrations.md); these commands work on the store directly.

  integrations list [--json]
      Lists integrations: id, platform, shop domain, status, products, last sync, last error.
  integrations sync ID [--force] [--json]
      Runs one sync of the integration now and waits for it (a progress line on a terminal).
      A sync is all or nothing: a failed one changes no product. One that read no item, or
      would make more than settings.max_drop (default 0.2) of the active products inactive,
      is held and changes nothing; --force applies it regardless.
      Exits 0 when it succeeded, 1 when it failed, 4 when it was held, 3 when a sync of it
      already runs (here or in serve), 130 when interrupted (the run is recorded as failed,
      nothing applied; the next one starts over).
  integrations rotate-key [--json]
      Re-encrypts every integration's credentials with the current key: SECRET_KEY, reading
      old values with OLD_SECRET_KEY or the key file DATA_DIR/secret.key; without SECRET_KEY,
      a new key file replaces DATA_DIR/secret.key. One transaction: all or nothing.`;

export async function runIntegrations(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, { force: { type: 'boolean' } });
  const [sub, ...rest] = positionals;
  if (values.help || !sub) {
    console.log(integrationsHelp);
    return values.help ? 0 : 2;
  }
  if (!['list', 'sync', 'rotate-key'].includes(sub)) {
    throw new UsageError(`unknown integrations command '${sub}'; use list, sync or rotate-key`);
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { toStderr: true });
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    const runner = new SyncRunner({
      db: store.db,
      box: new SecretBox(config),
      sources: platformSources,
      logger,
      now: () => new Date(),
      allowPrivate: config.ALLOW_PRIVATE_TARGETS,
      defaultCurrency: config.DEFAULT_CURRENCY,
      batchSize: config.SYNC_BATCH_SIZE,
      shopifyApiVersion: config.SHOPIFY_API_VERSION,
    });
    // A run a killed process left `running` is failed before anything is read or started.
    await recoverInterruptedSyncs(runner.env);
    switch (sub) {
      case 'list': {
        const rows = await listAllIntegrationRows(store.db);
        const items = [];
        for (const row of rows) {
          items.push(
            presentIntegration(row, (await findRunningSync(store.db, row.id)) !== undefined),
          );
        }
        if (values.json) {
          console.log(JSON.stringify(items));
          return 0;
        }
        console.log(
          ['ID', 'PLATFORM', 'SHOP', 'STATUS', 'PRODUCTS', 'LAST SYNC', 'LAST ERROR'].join('\t'),
        );
        for (const i of items) {
          console.log(
            [
              i.id,
              i.platform,
              i.shop_domain,
              i.sync_status === 'running' ? `${i.status} (syncing)` : i.status,
              i.product_count,
              i.last_sync ?? '-',
              i.last_error ?? '',
            ].join('\t'),
          );
        }
        return 0;
      }
      case 'sync': {
        const id = rest[0];
        if (!id)
          throw new UsageError(
            'integrations sync needs the integration id (int_...); see `agentshelf integrations list`',
          );
        const progress =
          process.stderr.isTTY && !values.json ? createProgress(process.stderr) : undefined;
        let interrupted = false;
        const onSignal = () => {
          interrupted = true;
          void runner.stop();
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          const { done } = await runner.start(id, {
            trigger: 'cli',
            ...(values.force ? { force: true } : {}),
            onProgress: (n, total) => progress?.update({ stage: 'sync', done: n, total }),
          });
          const run = await done;
          progress?.clear();
          if (values.json) {
            console.log(JSON.stringify(run));
          } else {
            console.log(
              `${run.id} ${run.status} in ${run.duration_ms ?? 0} ms: ${run.fetched} fetched, ${run.created} created, ${run.updated} updated, ${run.unchanged} unchanged, ${run.deactivated} deactivated, ${run.failed} failed`,
            );
            for (const e of run.errors) {
              console.log(`  ${e.external_id ?? '-'}: ${e.field} ${e.reason}`);
            }
            if (run.error) console.log(`  error: ${run.error}`);
          }
          if (interrupted) return 130;
          return run.status === 'succeeded' ? 0 : run.status === 'held' ? 4 : 1;
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }
      default: {
        const result = await rotateSecretKey(store.db, config);
        if (values.json) {
          console.log(JSON.stringify(result));
        } else {
          console.log(
            `re-encrypted the credentials of ${result.reencrypted} integration(s) with ${result.key_source} (key ${result.key_id}); ${result.current} already used it`,
          );
        }
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`error: ${err.message}`);
      return err.kind === 'conflict' ? 3 : 1;
    }
    if (err instanceof Error && err.name === 'SecretKeyError') {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
    logger.flush();
  }
}
