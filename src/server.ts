import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { openStore, type Store } from './db/store.js';
import { migrateToLatest } from './db/migrate.js';
import { startDiscoveryServer, type DiscoveryServer } from './http/discovery/server.js';
import { ApiKeyCache, countActiveApiKeys, createApiKey } from './domain/access/api-keys.js';
import { AuditWriter } from './domain/audit/writer.js';
import { monthOf, MonthlyUsage } from './domain/access/monthly-usage.js';
import { RateLimiter, type Limiter } from './domain/access/rate-limiter.js';
import { SharedRateLimiter } from './domain/access/shared-rate-limiter.js';
import { WebhookWorker } from './domain/webhooks/worker.js';
import { changesOf } from './domain/changes.js';
import { ReportWorker } from './domain/reports/worker.js';
import { analyticsReportSources } from './domain/reports/analytics-source.js';
import { createApp } from './http/app.js';
import { createDashboard } from './dashboard/app.js';
import { RequestLog } from './http/discovery/request-log.js';
import { startAnalyticsRetention, type AnalyticsRetention } from './domain/analytics/retention.js';
import type { AppDeps } from './http/route.js';
import { startPipelineScheduler, type PipelineScheduler } from '../pipeline/scheduler.js';
import type { Stage } from '../pipeline/stage.js';
import { openPipelineContext, runPipeline } from '../pipeline/run.js';
import { SecretBox } from './domain/integrations/secret-box.js';
import type { IntegrationEnv } from './domain/integrations/runtime.js';
import { platformSources } from './platforms/index.js';
import { recoverInterruptedSyncs, SyncRunner } from './domain/integrations/sync.js';
import { startSyncScheduler, type SyncScheduler } from './domain/integrations/scheduler.js';

export interface RunningServer {
  /** Base URL of the platform API, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  store: Store;
  deps: AppDeps;
  /** The discovery API (the published tree) on FEEDS_PORT. */
  discovery: DiscoveryServer;
  /** The admin key created on first start with an empty key table, if any. */
  firstAdminKey?: string;
  /** The daily purge of raw analytics interactions. */
  analyticsRetention: AnalyticsRetention;
  /** The pipeline schedule, when started with `pipeline`. */
  pipeline?: PipelineScheduler;
  /** The report generator (POST /v1/reports is generated here, in the background). */
  reports: ReportWorker;
  /** The SYNC_CRON schedule, when started with `syncSchedule`. */
  syncSchedule?: SyncScheduler;
  /**
   * Stops accepting, lets requests in flight finish, writes the queued audit entries and
   * usage counts, then closes the store.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  now?: () => Date;
  /** Create and report an admin key when the store has no live key (serve does; tests may not). */
  createFirstAdminKey?: boolean;
  /**
   * Run the pipeline inside the server (serve does): on FEEDS_CRON, FEEDS_DEBOUNCE_MS after
   * products or feeds change, and at start when the output is stale. Optionally other stages.
   */
  pipeline?: boolean | { stages: Stage[] };
  /** Run integration syncs on SYNC_CRON (serve does; tests may, and call its tick()). */
  syncSchedule?: boolean | { intervalMs: number };
  /** What the integrations use in place of the real ones (tests: platform waits). */
  integrations?: Partial<
    Pick<
      IntegrationEnv,
      'sources' | 'sleep' | 'httpClient' | 'batchSize' | 'testTimeoutMs' | 'idleTimeoutMs'
    >
  >;
}

/**
 * The per-key limiter: in memory for one process on SQLite, in the store when several
 * processes share it (RATE_LIMIT_STORE, by default `database` on PostgreSQL).
 */
function createLimiter(config: Config, store: Store, usage: MonthlyUsage): Limiter {
  const where =
    config.RATE_LIMIT_STORE ?? (store.location.dialect === 'sqlite' ? 'memory' : 'database');
  return where === 'database' ? new SharedRateLimiter(store.db, usage) : new RateLimiter(usage);
}

/**
 * Opens and migrates the store, then serves the platform API on HOST:PORT
 * (port 0 picks a free one). The caller decides what to do with signals.
 */
export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const store = openStore(config, {
    // PostgreSQL: an idle connection lost (a restart); the pool opens another when needed.
    onPoolError: (err) =>
      options.logger.warn(
        { code: (err as { code?: unknown }).code, reason: err.message },
        'store connection lost; reconnecting on demand',
      ),
  });
  try {
    await migrateToLatest(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  let firstAdminKey: string | undefined;
  if (options.createFirstAdminKey && (await countActiveApiKeys(store.db)) === 0) {
    const created = await createApiKey(
      store.db,
      { level: 'admin', name: 'first admin key' },
      { environment: config.ENVIRONMENT, defaultPlan: config.DEFAULT_PLAN },
    );
    firstAdminKey = created.secret;
  }
  const now = options.now ?? (() => new Date());
  let usage: MonthlyUsage | undefined;
  if (config.RATE_LIMITS) {
    usage = new MonthlyUsage(store.db, options.logger);
    await usage.load(monthOf(now().getTime()).id);
    usage.start(config.USAGE_FLUSH_MS);
  }
  let audit: AuditWriter | undefined;
  if (config.AUDIT_LOG) {
    audit = new AuditWriter(options.logger, {
      location: store.location,
      flushMs: config.AUDIT_FLUSH_MS,
      flushRows: config.AUDIT_FLUSH_ROWS,
      retentionDays: config.AUDIT_RETENTION_DAYS,
      now,
    });
    try {
      await audit.start();
    } catch (err) {
      await usage?.close();
      await store.close();
      throw err;
    }
  }
  const deps: AppDeps = {
    db: store.db,
    config,
    logger: options.logger,
    now,
    keyCache: new ApiKeyCache(store.externalChanges),
    lifecycle: { shuttingDown: false },
    ...(usage ? { limiter: createLimiter(config, store, usage) } : {}),
    ...(audit ? { audit } : {}),
    accessLog: new RequestLog(store.db, options.logger, { currency: config.DEFAULT_CURRENCY }),
  };
  // Integrations: a run a killed process left `running` is marked failed before anything starts.
  const integrations = new SyncRunner({
    db: store.db,
    box: new SecretBox(config),
    sources: platformSources,
    logger: options.logger,
    now,
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    defaultCurrency: config.DEFAULT_CURRENCY,
    batchSize: config.SYNC_BATCH_SIZE,
    shopifyApiVersion: config.SHOPIFY_API_VERSION,
    ...options.integrations,
  });
  deps.integrations = integrations;
  await recoverInterruptedSyncs(integrations.env);
  // Webhooks: the delivery worker reads the outbox for as long as the server runs.
  const webhooks = new WebhookWorker(deps);
  deps.webhooks = webhooks;
  const changes = changesOf(store.db);
  const unsubscribe = [
    changes.subscribe('eventRecorded', () => webhooks.nudge()),
    changes.subscribe('webhooksChanged', () => webhooks.nudge()),
  ];
  let pipeline: PipelineScheduler | undefined;
  const app = createApp(deps);
  // The merchant dashboard (/dashboard) beside the API, on the same port.
  const api = app.callback();
  let publishing: Promise<unknown> | undefined;
  const dashboard = createDashboard(deps, {
    // "Publish now": the schedule's run when serve runs it, else one run of our own.
    publish: (trigger) => {
      if (pipeline) return pipeline.requestRun(trigger);
      publishing ??= runPipelineOnce(store, config, options.logger, deps.now, trigger).finally(
        () => (publishing = undefined),
      );
    },
  }).callback();
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/dashboard' || url.startsWith('/dashboard/') || url.startsWith('/dashboard?')) {
      void dashboard(req, res);
    } else {
      void api(req, res);
    }
  });
  server.keepAliveTimeout = 5_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => resolve());
    });
  } catch (err) {
    await audit?.close();
    await usage?.close();
    await store.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;

  // Started once listening, so a port already in use leaves no schedule behind.
  if (options.pipeline) {
    const scheduler = startPipelineScheduler({
      store,
      config,
      logger: options.logger,
      now: deps.now,
      ...(typeof options.pipeline === 'object' ? { stages: options.pipeline.stages } : {}),
    });
    // Every write path (API, CLI in this process, seed, sync) announces through the domain.
    unsubscribe.push(
      changes.subscribe('catalogueChanged', () => scheduler.requestRun('products changed')),
      changes.subscribe('feedsChanged', () => scheduler.requestRun('feeds changed')),
    );
    pipeline = scheduler;
  }
  const syncSchedule = options.syncSchedule
    ? startSyncScheduler({
        runner: integrations,
        cron: config.SYNC_CRON,
        logger: options.logger,
        now: deps.now,
        ...(typeof options.syncSchedule === 'object' ? options.syncSchedule : {}),
      })
    : undefined;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const discovery = await startDiscoveryServer({
    config,
    db: store.db,
    logger: options.logger,
    now: deps.now,
  });
  webhooks.start();
  const analyticsRetention = startAnalyticsRetention({
    db: store.db,
    logger: options.logger,
    now: deps.now,
    retentionDays: config.ANALYTICS_RETENTION_DAYS,
  });
  // Reports: pending ones (also those a killed process left) are generated in the background.
  const reports = new ReportWorker({
    store,
    dataDir: config.DATA_DIR,
    storeName: config.STORE_NAME,
    currency: config.DEFAULT_CURRENCY,
    logger: options.logger,
    now: deps.now,
    sources: analyticsReportSources({
      currency: config.DEFAULT_CURRENCY,
      storeName: config.STORE_NAME,
    }),
  });
  unsubscribe.push(changes.subscribe('reportsChanged', () => reports.nudge()));
  await reports.start();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      deps.lifecycle.shuttingDown = true;
      for (const stop of unsubscribe) stop();
      // Every step runs even when one before it failed (the store must still close last); a
      // failure is logged with the step's name, and the first one is thrown at the end.
      const failures: Error[] = [];
      const step = async (name: string, run: () => unknown) => {
        try {
          await run();
        } catch (err) {
          options.logger.error({ err }, `shutdown: ${name} failed`);
          failures.push(new Error(`shutdown: ${name} failed: ${String(err)}`, { cause: err }));
        }
      };
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      // Deliveries and a pipeline run under way get the same grace as requests (a run is
      // aborted: its temporary files go, published files stay whole); the store closes last.
      await step('the sync schedule', () => syncSchedule?.stop());
      await step('publishing', () => publishing);
      await Promise.all([
        step('the HTTP server', () => closed),
        step('webhook deliveries', () => webhooks.stop(config.SHUTDOWN_TIMEOUT_MS)),
        step('the pipeline', () => pipeline?.stop()),
        step('reports', () => reports.stop()),
        step('integration syncs', () => integrations.stop()),
      ]);
      clearTimeout(timer);
      await step('the discovery server', () => discovery.close());
      await step('the request log', () => deps.accessLog?.close());
      await step('analytics retention', () => analyticsRetention.stop());
      // Every request has finished: write what the batches still hold, then close the store.
      await step('the audit log', () => audit?.close());
      await step('monthly usage', () => usage?.close());
      await step('the store', () => store.close());
      if (failures.length > 0) throw failures[0]!;
    })());

  return {
    url: `http://${host}:${port}`,
    port,
    store,
    deps,
    discovery,
    analyticsRetention,
    reports,
    close,
    ...(firstAdminKey ? { firstAdminKey } : {}),
    ...(pipeline ? { pipeline } : {}),
    ...(syncSchedule ? { syncSchedule } : {}),
  };
}

/** One pipeline run in the background (the dashboard's "publish now" without a schedule). */
async function runPipelineOnce(
  store: Store,
  config: Config,
  logger: Logger,
  now: () => Date,
  trigger: string,
): Promise<void> {
  const opened = openPipelineContext(store, { config, logger, now });
  try {
    await runPipeline(opened.ctx, undefined, { trigger, waitMs: 60_000 });
  } catch (err) {
    logger.error({ err }, 'pipeline run failed');
  } finally {
    await opened.close();
  }
}
