import os from 'node:os';
import type { IntegrationRow, IntegrationRowUpdate, SyncRunRow } from '../../db/schema.js';
import {
  countLiveMappings,
  findIntegrationById,
  findRunningSync,
  findSyncRun,
  insertSyncRun,
  listRunningSyncs,
  pruneSyncRuns,
  updateIntegrationRow,
  updateSyncRun,
} from '../../db/queries/integrations.js';
import { withTransaction } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { recordEvent } from '../events.js';
import { applyItems, deactivateUnseen, newCounts, type SyncCounts } from './apply.js';
import { failureMessage, presentIntegration, presentSyncRun } from './present.js';
import { guardTargets, targetsOf } from './targets.js';
import { openSourceContext, sourceOf, syncSignal, type IntegrationEnv } from './runtime.js';
import type { SyncRun } from './schemas.js';
import { SourceError, type SourceItem } from './source.js';
import { processIsGone } from '../../runtime/process.js';

/**
 * The sync: one run per integration at a time, in any process (a `running` row, unique per
 * integration, with its owner's pid, host and heartbeat). A run reads the platform's items,
 * writes them in batches (each one transaction, see apply.ts), then makes the products of
 * items it did not see inactive, and records the outcome with its event. A run whose process
 * died is marked failed by the next start (serve or CLI) or the next sync; the next run
 * starts over from the platform's first page: every batch it finds is already whole.
 */

/** A run whose owner has not written a heartbeat for this long is taken to be gone. */
export const SYNC_STALE_MS = 60_000;
const HEARTBEAT_MS = 5_000;
export const DEFAULT_BATCH = 500;
/** Runs kept per integration in the history (an hourly schedule: six weeks). */
export const HISTORY_KEPT = 1000;

/** For the crash test only: `sync-after-batch` kills the process after the first batch. */
const CRASH_AFTER_BATCH = process.env.AGENTSHELF_TEST_CRASH === 'sync-after-batch';

/** Owners (run tokens) of the runs this process is running. */
const liveOwners = new Set<string>();

function isGone(row: SyncRunRow): boolean {
  if (liveOwners.has(row.owner)) return false;
  if (row.hostname === os.hostname()) {
    // Our own pid with a token we do not hold is a past incarnation of this pid.
    if (Number(row.pid) === process.pid || processIsGone(Number(row.pid))) return true;
  }
  return Date.now() - Number(row.heartbeat_ms) > SYNC_STALE_MS;
}

export const INTERRUPTED =
  'interrupted: the process running this sync stopped (killed or crashed); the next sync starts over';

/**
 * Marks failed the runs whose process is gone (all integrations, or one), with
 * integration.sync.failed. Called at serve and CLI start, and before each sync begins.
 */
export async function recoverInterruptedSyncs(
  env: IntegrationEnv,
  integrationId?: string,
): Promise<number> {
  const rows = (await listRunningSyncs(env.db)).filter(
    (r) => (integrationId === undefined || r.integration_id === integrationId) && isGone(r),
  );
  for (const row of rows) {
    await finishRun(env, row, { ok: false, error: INTERRUPTED, counts: countsOf(row) });
    env.logger.warn(
      { integration: row.integration_id, sync: row.id },
      'sync marked failed: its process stopped',
    );
  }
  return rows.length;
}

function countsOf(row: SyncRunRow): SyncCounts {
  return {
    fetched: Number(row.fetched),
    created: Number(row.created),
    updated: Number(row.updated),
    unchanged: Number(row.unchanged),
    deactivated: Number(row.deactivated),
    failed: Number(row.failed),
    errors: JSON.parse(row.errors) as SyncCounts['errors'],
  };
}

function conflict(id: string, running: SyncRunRow | undefined): AppError {
  return new AppError(
    'conflict',
    `A sync of integration '${id}' is running${running ? ` (${running.id}, since ${running.started_at})` : ''}; wait for it to finish (GET /v1/integrations/${id}/sync/status).`,
    { field: 'id', reason: 'a sync is running' },
  );
}

export interface SyncOptions {
  trigger: string;
  signal?: AbortSignal;
  /** Items handled so far, of the total the platform announced (0 when unknown). */
  onProgress?: (done: number, total: number) => void;
}

export interface StartedSync {
  run: SyncRun;
  /** Settles when the run has ended (succeeded or failed); never rejects. */
  done: Promise<SyncRun>;
}

/** Claims the integration's run (409 when one is running) and runs it in the background. */
export async function startSync(
  env: IntegrationEnv,
  integrationId: string,
  options: SyncOptions,
): Promise<StartedSync> {
  const integration = await findIntegrationById(env.db, integrationId);
  if (!integration) throw notFound('integration', integrationId);
  await recoverInterruptedSyncs(env, integrationId);
  const now = env.now();
  const owner = randomBase62(16);
  const row: SyncRunRow = {
    id: newId('sync'),
    integration_id: integrationId,
    status: 'running',
    trigger: options.trigger,
    started_at: now.toISOString(),
    finished_at: null,
    duration_ms: null,
    fetched: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    deactivated: 0,
    failed: 0,
    errors: '[]',
    error: null,
    owner,
    pid: process.pid,
    hostname: os.hostname(),
    heartbeat_ms: Date.now(),
  };
  try {
    await withTransaction(env.db, async (trx) => {
      const running = await findRunningSync(trx, integrationId);
      if (running) throw conflict(integrationId, running);
      await insertSyncRun(trx, row);
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The unique index refused a second running row (another process won the race).
    const running = await findRunningSync(env.db, integrationId);
    if (running) throw conflict(integrationId, running);
    throw err;
  }
  liveOwners.add(owner);
  const done = runSync(env, integration, row, options).finally(() => liveOwners.delete(owner));
  return { run: presentSyncRun(row), done };
}

async function runSync(
  env: IntegrationEnv,
  integration: IntegrationRow,
  run: SyncRunRow,
  options: SyncOptions,
): Promise<SyncRun> {
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) abort();
  const heartbeat = setInterval(() => {
    updateSyncRun(env.db, run.id, { heartbeat_ms: Date.now() }).catch((err: unknown) =>
      env.logger.warn({ err, sync: run.id }, 'sync heartbeat not written'),
    );
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const counts = newCounts();
  let state: Record<string, unknown> | undefined;
  let outcome: { ok: true } | { ok: false; error: string; auth: boolean };
  try {
    state = await readAndWrite(env, integration, run, controller.signal, counts, options);
    outcome = { ok: true };
  } catch (err) {
    const error = controller.signal.aborted
      ? 'stopped: the server shut down during the sync'
      : failureMessage(err);
    if (
      !controller.signal.aborted &&
      !(err instanceof SourceError) &&
      failureMessage(err).startsWith('unexpected')
    ) {
      env.logger.error({ err, integration: integration.id, sync: run.id }, 'sync failed');
    }
    outcome = { ok: false, error, auth: err instanceof SourceError && err.kind === 'auth' };
  } finally {
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', abort);
  }
  try {
    return await finishRun(env, run, { ...outcome, counts, ...(state ? { state } : {}) });
  } catch (err) {
    env.logger.error(
      { err, integration: integration.id, sync: run.id },
      'sync outcome not recorded',
    );
    return presentSyncRun(run);
  }
}

/** Reads every item and writes them in batches; returns the state the source asked to keep. */
async function readAndWrite(
  env: IntegrationEnv,
  integration: IntegrationRow,
  run: SyncRunRow,
  signal: AbortSignal,
  counts: SyncCounts,
  options: SyncOptions,
): Promise<Record<string, unknown> | undefined> {
  const settings = JSON.parse(integration.settings) as Record<string, unknown>;
  await guardTargets(
    targetsOf(integration.platform, integration.shop_domain, settings),
    env.allowPrivate,
  );
  const source = sourceOf(env, integration.platform);
  const { ctx, newState } = openSourceContext(env, integration, syncSignal(signal, settings));
  const batchSize = env.batchSize ?? DEFAULT_BATCH;
  const seen = new Set<string>();
  let total = 0;
  let notModified = false;
  let batch: SourceItem[] = [];
  let batches = 0;
  const flush = async () => {
    signal.throwIfAborted();
    const items = batch;
    batch = [];
    await applyItems(env.db, integration.id, items, {
      defaultCurrency: env.defaultCurrency,
      now: env.now(),
      counts,
      seen,
    });
    batches++;
    await updateSyncRun(env.db, run.id, { ...progressOf(counts), heartbeat_ms: Date.now() });
    options.onProgress?.(counts.fetched, total);
    if (CRASH_AFTER_BATCH && batches === 1) process.kill(process.pid, 'SIGKILL');
  };
  for await (const item of source.items(ctx)) {
    if (item.kind === 'total') {
      total = item.count;
      options.onProgress?.(counts.fetched, total);
    } else if (item.kind === 'not_modified') {
      notModified = true;
    } else {
      batch.push(item);
      if (batch.length >= batchSize) await flush();
    }
  }
  if (batch.length > 0) await flush();
  // A feed that did not change (304) keeps every product as it is.
  if (!notModified) {
    await deactivateUnseen(env.db, integration.id, seen, {
      now: env.now(),
      counts,
      batchSize,
      signal,
    });
  }
  options.onProgress?.(counts.fetched, total);
  return newState();
}

function progressOf(counts: SyncCounts) {
  return {
    fetched: counts.fetched,
    created: counts.created,
    updated: counts.updated,
    unchanged: counts.unchanged,
    deactivated: counts.deactivated,
    failed: counts.failed,
    errors: JSON.stringify(counts.errors),
  };
}

/**
 * Records the end of a run, the integration's new state and the events, in one transaction:
 * integration.sync.completed or integration.sync.failed; integration.connected when a good
 * run brings back an integration in error, integration.disconnected when the platform refused
 * the credentials.
 */
async function finishRun(
  env: IntegrationEnv,
  run: SyncRunRow,
  outcome: ({ ok: true } | { ok: false; error: string; auth?: boolean }) & {
    counts: SyncCounts;
    state?: Record<string, unknown>;
  },
): Promise<SyncRun> {
  const now = env.now();
  return withTransaction(env.db, async (trx) => {
    const current = await findSyncRun(trx, run.id);
    if (!current || current.status !== 'running') return presentSyncRun(current ?? run);
    const finished: SyncRunRow = {
      ...current,
      ...progressOf(outcome.counts),
      status: outcome.ok ? 'succeeded' : 'failed',
      finished_at: now.toISOString(),
      duration_ms: Math.max(0, now.getTime() - Date.parse(current.started_at)),
      error: outcome.ok ? null : outcome.error,
    };
    await updateSyncRun(trx, run.id, finished);
    await pruneSyncRuns(trx, run.integration_id, HISTORY_KEPT);
    const syncRun = presentSyncRun(finished);
    const integration = await findIntegrationById(trx, run.integration_id);
    if (!integration) return syncRun;
    const patch: IntegrationRowUpdate = {
      updated_at: now.toISOString(),
      product_count: await countLiveMappings(trx, run.integration_id),
    };
    if (outcome.ok) {
      patch.last_sync_at = now.toISOString();
      patch.last_error = null;
      if (outcome.state) patch.state = JSON.stringify(outcome.state);
      if (integration.status === 'error') patch.status = 'connected';
    } else {
      patch.last_error = outcome.error;
      if (outcome.auth && integration.status === 'connected') patch.status = 'error';
    }
    await updateIntegrationRow(trx, run.integration_id, patch);
    const after = presentIntegration({ ...integration, ...patch } as IntegrationRow);
    await recordEvent(
      trx,
      outcome.ok ? 'integration.sync.completed' : 'integration.sync.failed',
      syncRun,
      now,
    );
    if (patch.status === 'connected') await recordEvent(trx, 'integration.connected', after, now);
    if (patch.status === 'error') await recordEvent(trx, 'integration.disconnected', after, now);
    return syncRun;
  });
}

/**
 * The syncs this process runs (serve's, or the CLI's one): started through here, they are
 * aborted and awaited on shutdown.
 */
export class SyncRunner {
  private readonly controller = new AbortController();
  private readonly active = new Map<string, Promise<SyncRun>>();

  constructor(readonly env: IntegrationEnv) {}

  async start(integrationId: string, options: Omit<SyncOptions, 'signal'>): Promise<StartedSync> {
    if (this.controller.signal.aborted) {
      throw new AppError('unavailable', 'The server is shutting down.', { retryAfter: 5 });
    }
    const started = await startSync(this.env, integrationId, {
      ...options,
      signal: this.controller.signal,
    });
    this.active.set(started.run.id, started.done);
    void started.done.finally(() => this.active.delete(started.run.id));
    return started;
  }

  /** The end of a run this process started (undefined when it has already ended). */
  settled(runId: string): Promise<SyncRun> | undefined {
    return this.active.get(runId);
  }

  /** Aborts the runs under way (each is recorded as failed) and waits for them to end. */
  async stop(): Promise<void> {
    this.controller.abort(new Error('shutting down'));
    await Promise.all([...this.active.values()]);
  }
}
