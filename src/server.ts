import http from 'node:http';
import type { Logger } from 'pino';
import type { AppDeps } from './app-deps.js';
import type { Config } from './config.js';
import { openStore, type Store } from './db/store.js';
import { migrateToLatest } from './db/migrate.js';
import { startCounterFold } from './domain/products/counter-fold.js';
import { startDiscoveryServer, type DiscoveryServer } from './http/discovery/server.js';
import { ApiKeyCache, countActiveApiKeys, createApiKey } from './domain/access/api-keys.js';
import { AuditWriter } from './domain/audit/writer.js';
import { monthOf, MonthlyUsage } from './domain/access/monthly-usage.js';
import { RateLimiter, type Limiter } from './domain/access/rate-limiter.js';
import { SharedRateLimiter } from './domain/access/shared-rate-limiter.js';
import { WebhookWorker } from './domain/webhooks/worker.js';
import { WorkerRegistry } from './domain/workers/registry.js';
import { changesOf } from './domain/changes.js';
import { ReportWorker } from './reports/worker.js';
import { analyticsReportSources } from './domain/reports/analytics-source.js';
import { createApp } from './http/app.js';
import { baseUrl, closeGracefully, listen } from './http/listen.js';
import { createDashboard } from './dashboard/app.js';
import { RequestLog } from './http/discovery/request-log.js';
import { startAnalyticsRetention, type AnalyticsRetention } from './domain/analytics/retention.js';
import { startPipelineScheduler, type PipelineScheduler } from '../pipeline/scheduler.js';
import type { Stage } from '../pipeline/stage.js';
import { openPipelineContext, runPipeline } from '../pipeline/run.js';
import { SecretBox } from './domain/integrations/secret-box.js';
import { DeliveryRunner } from './domain/feeds/deliveries.js';
import { deliveryRemoteReaders, deliveryTransports } from './platforms/index.js';
import type { IntegrationEnv } from './domain/integrations/runtime.js';
import { platformSources } from './platforms/index.js';
import { recoverInterruptedSyncs, SyncRunner } from './domain/integrations/sync.js';
import { startSyncScheduler, type SyncScheduler } from './domain/integrations/scheduler.js';
import { inParallel, service, Services, type Service } from './runtime/service.js';

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
  /** The feed delivery worker (sends due channel deliveries in the background). */
  deliveries: DeliveryRunner;
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
   * Run the pipeline inside the server (serve does): on FEEDS_CRON, when products or feeds
   * change (pipeline/scheduler.ts), and at start when the output is stale. Optionally other
   * stages.
   */
  pipeline?: boolean | { stages: Stage[] };
  /**
   * How often the discovery server writes the requests it recorded, in ms (default 1000;
   * tests that write them only when they flush set it far away).
   */
  discoveryFlushMs?: number;
  /** Run integration syncs on SYNC_CRON (serve does; tests may, and call its tick()). */
  syncSchedule?: boolean | { intervalMs: number };
  /** What the integrations use in place of the real ones (tests: platform waits). */
  integrations?: Partial<
    Pick<
      IntegrationEnv,
      | 'sources'
      | 'sleep'
      | 'httpClient'
      | 'batchSize'
      | 'testTimeoutMs'
      | 'idleTimeoutMs'
      | 'inApply'
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

/** The parts of a running server; those a service creates at its start are set then. */
interface Parts {
  config: Config;
  options: StartOptions;
  logger: Logger;
  store: Store;
  /** This process among the live `serve` processes on the store: who delivers and syncs what. */
  workers: WorkerRegistry;
  deps: AppDeps & {
    webhooks: WebhookWorker;
    integrations: SyncRunner;
    deliveries: DeliveryRunner;
  };
  /** Sends feed deliveries (sftp, ...) in the background. */
  deliveries: DeliveryRunner;
  usage?: MonthlyUsage;
  reports: ReportWorker;
  firstAdminKey?: string;
  audit?: AuditWriter;
  discovery?: DiscoveryServer;
  analyticsRetention?: AnalyticsRetention;
  pipeline?: PipelineScheduler;
  syncSchedule?: SyncScheduler;
  http?: http.Server;
  port?: number;
  /** A "publish now" run of the dashboard's own (when serve runs no schedule). */
  publishing?: Promise<unknown>;
}

/**
 * Opens the store and starts every part of the server (see services()): the platform API and
 * the dashboard on HOST:PORT (port 0 picks a free one), the discovery server, the workers and
 * schedules. close() stops them in reverse. The caller decides what to do with signals.
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
  const parts = assemble(config, options, store);
  const running = new Services(services(parts), options.logger);
  await running.start();
  const port = parts.port!;
  return {
    url: baseUrl(config.HOST, port),
    port,
    store,
    deps: parts.deps,
    discovery: parts.discovery!,
    analyticsRetention: parts.analyticsRetention!,
    reports: parts.reports,
    deliveries: parts.deliveries,
    close: () => running.stop(),
    ...(parts.firstAdminKey ? { firstAdminKey: parts.firstAdminKey } : {}),
    ...(parts.pipeline ? { pipeline: parts.pipeline } : {}),
    ...(parts.syncSchedule ? { syncSchedule: parts.syncSchedule } : {}),
  };
}

/** Builds the shared dependencies and the workers; nothing runs until their service starts. */
function assemble(config: Config, options: StartOptions, store: Store): Parts {
  const { logger } = options;
  const now = options.now ?? (() => new Date());
  const usage = config.RATE_LIMITS ? new MonthlyUsage(store.db, logger) : undefined;
  const integrations = new SyncRunner({
    db: store.db,
    box: new SecretBox(config),
    sources: platformSources,
    logger,
    now,
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    defaultCurrency: config.DEFAULT_CURRENCY,
    batchSize: config.SYNC_BATCH_SIZE,
    shopifyApiVersion: config.SHOPIFY_API_VERSION,
    ...options.integrations,
  });
  const base = {
    db: store.db,
    config,
    logger,
    now,
    keyCache: new ApiKeyCache(store.externalChanges),
    lifecycle: { shuttingDown: false },
    ...(usage ? { limiter: createLimiter(config, store, usage) } : {}),
    integrations,
    openReader: () => store.openReader(),
  };
  const deliveries = new DeliveryRunner({
    db: store.db,
    box: new SecretBox(config),
    transports: deliveryTransports,
    remoteReaders: deliveryRemoteReaders,
    logger,
    now,
    dataDir: config.DATA_DIR,
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    retrySchedule: config.FEED_DELIVERY_RETRY_SCHEDULE,
    leaseMs: config.FEED_DELIVERY_LEASE_MS,
    waitMs: config.FEED_DELIVERY_WAIT_SECONDS * 1000,
  });
  const workers = new WorkerRegistry({
    db: store.db,
    logger,
    now,
    ttlMs: config.WEBHOOK_LEASE_MS,
  });
  const deps = { ...base, webhooks: new WebhookWorker(base, { workers }), deliveries };
  const reports = new ReportWorker({
    store,
    dataDir: config.DATA_DIR,
    storeName: config.STORE_NAME,
    currency: config.DEFAULT_CURRENCY,
    logger,
    now,
    sources: analyticsReportSources({
      currency: config.DEFAULT_CURRENCY,
      storeName: config.STORE_NAME,
    }),
  });
  return {
    config,
    options,
    logger,
    store,
    workers,
    deps,
    reports,
    deliveries,
    ...(usage ? { usage } : {}),
  };
}

/**
 * Every long-lived part, in the order it starts; close() stops them in reverse, each stop run
 * whatever failed before it. The store comes first and closes last; the parts that write to
 * it in batches (usage, audit, request log) close after everything that serves requests; the
 * serving parts drain together, within one SHUTDOWN_TIMEOUT_MS; new requests are refused
 * first.
 */
function services(parts: Parts): Service[] {
  return [
    storeService(parts),
    usageService(parts),
    auditService(parts),
    retentionService(parts),
    counterFoldService(parts),
    // This process's heartbeat among the live workers (before the workers that share by it;
    // its row removed after they stopped).
    service('the worker registry', {
      start: () => parts.workers.start(),
      stop: () => parts.workers.stop(),
    }),
    // Records feed exports as analytics interactions, in batches.
    service('the request log', {
      start: () => {
        parts.deps.accessLog = new RequestLog(parts.store.db, parts.logger, {
          currency: parts.config.DEFAULT_CURRENCY,
        });
      },
      stop: () => parts.deps.accessLog?.close(),
    }),
    discoveryService(parts),
    // PostgreSQL: the LISTEN connection that tells the key cache of another process's change
    // (closed with the store); SQLite: the data version read.
    service('the key-change listener', { start: () => parts.store.externalChanges() }),
    // Draining together: requests, deliveries, a pipeline run (aborted: its temporary files
    // go, published files stay whole), a report, syncs.
    inParallel('serving', [
      // A run a killed process left `running` is marked failed before anything starts.
      service('integration syncs', {
        start: () => recoverInterruptedSyncs(parts.deps.integrations.env),
        stop: () => parts.deps.integrations.stop(),
      }),
      apiService(parts),
      pipelineService(parts),
      service('webhook deliveries', {
        start: () => parts.deps.webhooks.start(),
        stop: () => parts.deps.webhooks.stop(parts.config.SHUTDOWN_TIMEOUT_MS),
      }),
      service('feed deliveries', {
        start: () => parts.deliveries.start(),
        stop: () => parts.deliveries.stop(),
      }),
      // Pending reports (also those a killed process left) are generated in the background.
      service('reports', { start: () => parts.reports.start(), stop: () => parts.reports.stop() }),
    ]),
    service('publishing', { stop: () => parts.publishing }),
    syncScheduleService(parts),
    notificationService(parts),
    service('admission', { stop: () => (parts.deps.lifecycle.shuttingDown = true) }),
  ];
}

/** Migrates the store (and creates the first admin key); closes it last. */
function storeService(parts: Parts): Service {
  const { store, options, config } = parts;
  return service('the store', {
    start: async () => {
      try {
        await migrateToLatest(store.db);
        if (options.createFirstAdminKey && (await countActiveApiKeys(store.db)) === 0) {
          const created = await createApiKey(
            store.db,
            { level: 'admin', name: 'first admin key' },
            { environment: config.ENVIRONMENT, defaultPlan: config.DEFAULT_PLAN },
          );
          parts.firstAdminKey = created.secret;
        }
      } catch (err) {
        await store.close();
        throw err;
      }
    },
    stop: () => store.close(),
  });
}

/** Monthly request counts: loaded at start, flushed every USAGE_FLUSH_MS and at the end. */
function usageService({ usage, config, deps }: Parts): Service {
  return service('monthly usage', {
    start: async () => {
      if (!usage) return;
      await usage.load(monthOf(deps.now().getTime()).id);
      usage.start(config.USAGE_FLUSH_MS);
    },
    stop: () => usage?.close(),
  });
}

/** The audit log's writer thread (AUDIT_LOG): what it holds is written at the end. */
function auditService(parts: Parts): Service {
  const { config, store, deps } = parts;
  return service('the audit log', {
    start: async () => {
      if (!config.AUDIT_LOG) return;
      const audit = new AuditWriter(parts.logger, {
        location: store.location,
        flushMs: config.AUDIT_FLUSH_MS,
        flushRows: config.AUDIT_FLUSH_ROWS,
        retentionDays: config.AUDIT_RETENTION_DAYS,
        now: deps.now,
      });
      await audit.start();
      parts.audit = deps.audit = audit;
    },
    stop: () => parts.audit?.close(),
  });
}

/** Folds the product and category counters' per-writer deltas into their base rows. */
function counterFoldService(parts: Parts): Service {
  let fold: { stop(): Promise<void> } | undefined;
  return service('the counter fold', {
    start: () => {
      fold = startCounterFold({ db: parts.store.db, logger: parts.logger });
    },
    stop: () => fold?.stop(),
  });
}

/** The daily purge of raw analytics interactions. */
function retentionService(parts: Parts): Service {
  return service('analytics retention', {
    start: () => {
      parts.analyticsRetention = startAnalyticsRetention({
        db: parts.store.db,
        logger: parts.logger,
        now: parts.deps.now,
        retentionDays: parts.config.ANALYTICS_RETENTION_DAYS,
      });
    },
    stop: () => parts.analyticsRetention?.stop(),
  });
}

/** The discovery API (the published tree) on FEEDS_PORT. */
function discoveryService(parts: Parts): Service {
  return service('the discovery server', {
    start: async () => {
      parts.discovery = await startDiscoveryServer({
        config: parts.config,
        db: parts.store.db,
        logger: parts.logger,
        now: parts.deps.now,
        ...(parts.options.discoveryFlushMs ? { flushMs: parts.options.discoveryFlushMs } : {}),
      });
    },
    stop: () => parts.discovery?.close(),
  });
}

/** The platform API and, on the same port, the merchant dashboard (/dashboard). */
function apiService(parts: Parts): Service {
  const { config, deps } = parts;
  return service('the HTTP server', {
    start: async () => {
      const api = createApp(deps).callback();
      const dashboard = createDashboard(deps, {
        // "Publish now": the schedule's run when serve runs it, else one run of our own.
        publish: (trigger) => {
          if (parts.pipeline) return parts.pipeline.requestRun(trigger);
          parts.publishing ??= runPipelineOnce(parts, trigger).finally(
            () => (parts.publishing = undefined),
          );
        },
      }).callback();
      const server = http.createServer((req, res) => {
        const url = req.url ?? '';
        if (
          url === '/dashboard' ||
          url.startsWith('/dashboard/') ||
          url.startsWith('/dashboard?') ||
          url === '/favicon.ico'
        ) {
          void dashboard(req, res);
        } else {
          void api(req, res);
        }
      });
      server.keepAliveTimeout = 5_000;
      parts.port = await listen(server, config.PORT, config.HOST);
      parts.http = server;
    },
    stop: () => parts.http && closeGracefully(parts.http, config.SHUTDOWN_TIMEOUT_MS),
  });
}

/** The pipeline schedule (`pipeline` option): FEEDS_CRON, after changes, at start if stale. */
function pipelineService(parts: Parts): Service {
  const { options } = parts;
  return service('the pipeline', {
    start: () => {
      if (!options.pipeline) return;
      parts.pipeline = startPipelineScheduler({
        store: parts.store,
        config: parts.config,
        logger: parts.logger,
        now: parts.deps.now,
        ...(typeof options.pipeline === 'object' ? { stages: options.pipeline.stages } : {}),
      });
    },
    stop: () => parts.pipeline?.stop(),
  });
}

/** Integration syncs on SYNC_CRON (`syncSchedule` option). */
function syncScheduleService(parts: Parts): Service {
  const { options } = parts;
  return service('the sync schedule', {
    start: () => {
      if (!options.syncSchedule) return;
      parts.syncSchedule = startSyncScheduler({
        runner: parts.deps.integrations,
        cron: parts.config.SYNC_CRON,
        logger: parts.logger,
        now: parts.deps.now,
        workers: parts.workers,
        ...(typeof options.syncSchedule === 'object' ? options.syncSchedule : {}),
      });
    },
    stop: () => parts.syncSchedule?.stop(),
  });
}

/**
 * The change notifications that wake the workers: every write path (API, CLI in this process,
 * seed, sync) announces through the domain.
 */
function notificationService(parts: Parts): Service {
  let unsubscribe: (() => void)[] = [];
  return service('change notifications', {
    start: () => {
      const changes = changesOf(parts.store.db);
      const { webhooks } = parts.deps;
      unsubscribe = [
        changes.subscribe('eventRecorded', () => webhooks.nudge()),
        changes.subscribe('webhooksChanged', () => webhooks.nudge()),
        changes.subscribe('reportsChanged', () => parts.reports.nudge()),
      ];
      const pipeline = parts.pipeline;
      if (pipeline) {
        unsubscribe.push(
          changes.subscribe('catalogueChanged', () => pipeline.requestRun('products changed')),
          changes.subscribe('feedsChanged', () => pipeline.requestRun('feeds changed')),
        );
      }
    },
    stop: () => {
      for (const stop of unsubscribe) stop();
    },
  });
}

/** One pipeline run in the background (the dashboard's "publish now" without a schedule). */
async function runPipelineOnce(parts: Parts, trigger: string): Promise<void> {
  const { store, config, logger } = parts;
  const opened = openPipelineContext(store, { config, logger, now: parts.deps.now });
  try {
    await runPipeline(opened.ctx, undefined, { trigger, waitMs: 60_000 });
  } catch (err) {
    logger.error({ err }, 'pipeline run failed');
  } finally {
    await opened.close();
  }
}
