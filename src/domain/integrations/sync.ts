import os from 'node:os';
import type { IntegrationRow, IntegrationRowUpdate, SyncRunRow } from '../../db/schema.js';
import {
  countActiveMappedProducts,
  countLiveMappings,
  deleteStagedItems,
  deleteStagedItemsOfEndedRuns,
  beatSyncRun,
  findIntegrationById,
  findRunningSync,
  findSyncRun,
  insertStagedItems,
  insertSyncRun,
  listRunningSyncs,
  lockIntegrationApply,
  lockIntegrationExists,
  pageStagedPayloads,
  pruneSyncRuns,
  updateIntegrationRow,
  updateSyncRun,
} from '../../db/queries/integrations.js';
import { dialectOf } from '../../db/dialect.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { recordEvent } from '../events.js';
import { applyItems, deactivateUnstaged, newCounts, stageItems, type SyncCounts } from './apply.js';
import { failureMessage, presentIntegration, presentSyncRun } from './present.js';
import { guardTargets, targetsOf } from './targets.js';
import { openSourceContext, sourceOf, type IntegrationEnv } from './runtime.js';
import type { SyncRun } from './schemas.js';
import { SourceError, type SourceItem } from './source.js';
import { processIsGone } from '../../runtime/process.js';
import { Pacer } from '../../runtime/pace.js';

/**
 * The sync: one run per integration at a time, in any process (a `running` row, unique per
 * integration, with its owner's pid, host and heartbeat). A run is all or nothing: it reads
 * the platform's items and stages them in batches (sync_staged_items: what needs writing,
 * and every external id the platform still lists; the memory it holds is one batch), then
 * applies them in one transaction at its end: the writes, the products of items it did not
 * see made inactive, the run's outcome and every event. That transaction writes a page at a
 * time and gives the event loop a turn every SLICE_MS; API reads do not wait for it (on
 * SQLite they read the last commit on a connection of their own: db/sqlite/driver.ts). A run that fails, however (a size
 * cap, a parse error, an HTTP error, its deadline, a crash of its process), changes no
 * product and announces none. A run that read no item, or that would make more than
 * `settings.max_drop` (default 0.2) of the integration's active products inactive, is
 * `held`: the same transaction is rolled back and the run records what it would have done
 * and why, with integration.sync.held; a forced run (`force`) applies regardless. A run whose
 * process died is marked failed by the next start (serve or CLI) or the next sync, which also
 * deletes what it had staged.
 */

/** A run whose owner has not written a heartbeat for this long is taken to be gone. */
export const SYNC_STALE_MS = 60_000;
const HEARTBEAT_MS = 5_000;
export const DEFAULT_BATCH = 500;
/**
 * Staged items written per page of the final apply (at most the batch size): the event loop
 * gets a turn between pages, and between the items of a page that take a query each.
 */
const APPLY_PAGE = 100;
/** Runs kept per integration in the history (an hourly schedule: six weeks). */
export const HISTORY_KEPT = 1000;

/** The default of `settings.max_drop`: the share of active products a run may make inactive. */
export const DEFAULT_MAX_DROP = 0.2;
/** The default of `settings.timeout_s`: a run's total deadline, in seconds. */
export const DEFAULT_TIMEOUT_S = 600;

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
  let recovered = 0;
  for (const row of rows) {
    // A row locked is a run's apply under way (its heartbeats skip the row meanwhile): alive,
    // left alone; one that ended meanwhile, too.
    const ended = await finishRun(
      env,
      row,
      { status: 'failed', error: INTERRUPTED, counts: countsOf(row) },
      { ifFree: true },
    );
    if (!ended) continue;
    recovered++;
    env.logger.warn(
      { integration: row.integration_id, sync: row.id },
      'sync marked failed: its process stopped',
    );
  }
  // What ended runs had staged (a process that died between its commit and this cleanup).
  await deleteStagedItemsOfEndedRuns(env.db);
  return recovered;
}

function countsOf(row: SyncRunRow): SyncCounts {
  const { fetched, created, updated, unchanged, deactivated, failed, errors } = presentSyncRun(row);
  return { fetched, created, updated, unchanged, deactivated, failed, errors };
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
  /** Apply even a run the hold checks would hold (no item read, more than max_drop gone). */
  force?: boolean;
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
    trigger: options.force ? `${options.trigger} (force)` : options.trigger,
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
      // One running sync per integration (the one-running index decides a race); the row kept
      // from a delete, without waiting for an apply of this integration to end.
      if (!(await lockIntegrationExists(trx, integrationId))) {
        throw notFound('integration', integrationId);
      }
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

/** A run that ended with nothing applied because the hold checks held it. */
class Held extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'Held';
  }
}

/** A run past its total deadline (`settings.timeout_s`). */
class DeadlinePassed extends Error {
  constructor(readonly seconds: number) {
    super(`the sync ran past its time limit of ${seconds} s (settings.timeout_s) and was stopped`);
    this.name = 'DeadlinePassed';
  }
}

/** The run settings of the sync itself (any platform), read leniently: the API checks them. */
function runSettingsOf(settings: Record<string, unknown>): { maxDrop: number; timeoutS: number } {
  const maxDrop = settings.max_drop;
  const timeoutS = settings.timeout_s;
  return {
    maxDrop:
      typeof maxDrop === 'number' && maxDrop >= 0 && maxDrop <= 1 ? maxDrop : DEFAULT_MAX_DROP,
    timeoutS:
      typeof timeoutS === 'number' && Number.isSafeInteger(timeoutS) && timeoutS > 0
        ? timeoutS
        : DEFAULT_TIMEOUT_S,
  };
}

async function runSync(
  env: IntegrationEnv,
  integration: IntegrationRow,
  run: SyncRunRow,
  options: SyncOptions,
): Promise<SyncRun> {
  const settings = JSON.parse(integration.settings) as Record<string, unknown>;
  const { timeoutS } = runSettingsOf(settings);
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) abort();
  const deadline = setTimeout(
    () => controller.abort(new DeadlinePassed(timeoutS)),
    timeoutS * 1000,
  );
  deadline.unref();
  // One heartbeat at a time, none waiting for the run's row: while the apply holds it (to
  // its commit), the lock itself shows the run alive to a process that would end it.
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating) return;
    beating = true;
    beatSyncRun(env.db, run.id, Date.now())
      .catch((err: unknown) => env.logger.warn({ err, sync: run.id }, 'sync heartbeat not written'))
      .finally(() => (beating = false));
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const counts = newCounts();
  let outcome: Outcome;
  try {
    outcome = await readStageAndApply(env, integration, run, controller.signal, counts, {
      ...options,
      deadlineAt: Date.now() + timeoutS * 1000,
    });
  } catch (err) {
    const reason: unknown = controller.signal.reason;
    // Not the platform's fault, nor the merchant's: reading, staging or applying failed here
    // (the store refused a statement, say), and the server log says which.
    const unexpected =
      !controller.signal.aborted &&
      !(err instanceof SourceError) &&
      failureMessage(err).startsWith('unexpected');
    const error = controller.signal.aborted
      ? reason instanceof DeadlinePassed
        ? `${reason.message}; nothing was applied`
        : 'stopped: the server shut down during the sync; nothing was applied'
      : unexpected
        ? 'unexpected error during the sync; nothing was applied (see the server log)'
        : failureMessage(err);
    if (unexpected) {
      env.logger.error({ err, integration: integration.id, sync: run.id }, 'sync failed');
    }
    outcome = {
      status: 'failed',
      error,
      auth: err instanceof SourceError && err.kind === 'auth',
      counts: stagedCounts(counts),
    };
  } finally {
    clearTimeout(deadline);
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', abort);
  }
  try {
    return outcome.status === 'succeeded' && outcome.recorded
      ? outcome.recorded
      : await finishRun(env, run, outcome);
  } catch (err) {
    env.logger.error(
      { err, integration: integration.id, sync: run.id },
      'sync outcome not recorded',
    );
    return presentSyncRun(run);
  } finally {
    const pacer = new Pacer();
    await deleteStagedItems(env.db, run.id, { between: () => pacer.turn() }).catch((err: unknown) =>
      env.logger.warn({ err, sync: run.id }, 'staged items of a sync not deleted'),
    );
  }
}

type Outcome = (
  | { status: 'succeeded'; state?: Record<string, unknown>; recorded?: SyncRun }
  | { status: 'held'; error: string }
  | { status: 'failed'; error: string; auth?: boolean }
) & { counts: SyncCounts };

/** Only what a run counts while staging: a run that applied nothing created nothing. */
function stagedCounts(counts: SyncCounts): SyncCounts {
  return { ...counts, created: 0, updated: 0, deactivated: 0 };
}

/**
 * Reads every item and stages it in batches, then applies the staged items in one
 * transaction that also records the run's outcome (or rolls back, when the run is held).
 */
async function readStageAndApply(
  env: IntegrationEnv,
  integration: IntegrationRow,
  run: SyncRunRow,
  signal: AbortSignal,
  counts: SyncCounts,
  options: SyncOptions & { deadlineAt: number },
): Promise<Outcome> {
  const settings = JSON.parse(integration.settings) as Record<string, unknown>;
  await guardTargets(
    targetsOf(integration.platform, integration.shop_domain, settings),
    env.allowPrivate,
  );
  const source = sourceOf(env, integration.platform);
  const { ctx, newState } = openSourceContext(env, integration, signal);
  const batchSize = env.batchSize ?? DEFAULT_BATCH;
  let total = 0;
  let notModified = false;
  let batch: SourceItem[] = [];
  let batches = 0;
  let seq = 0;
  const pacer = new Pacer();
  const flush = async () => {
    signal.throwIfAborted();
    const items = batch;
    batch = [];
    const staged = await stageItems(env.db, integration.id, items, {
      defaultCurrency: env.defaultCurrency,
      counts,
    });
    await pacer.turn();
    await insertStagedItems(
      env.db,
      staged.map((s) => ({
        run_id: run.id,
        seq: ++seq,
        external_id: s.externalId,
        payload: s.item === null ? null : JSON.stringify(s.item),
      })),
    );
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
  signal.throwIfAborted();
  const state = newState();
  // A feed that did not change (304) keeps every product as it is.
  if (notModified) return { status: 'succeeded', counts, ...(state ? { state } : {}) };
  const { maxDrop } = runSettingsOf(settings);
  if (counts.fetched === 0 && !options.force) {
    const active = await countActiveMappedProducts(env.db, integration.id);
    return {
      status: 'held',
      counts: { ...counts, deactivated: active },
      error:
        `held: the source listed no item${active > 0 ? `, which would make all ${active} of the integration's active products inactive` : ''}. ` +
        'Nothing was changed. Check the source; to apply it anyway, sync with force.',
    };
  }
  const before = { ...counts, errors: [...counts.errors] };
  const now = env.now();
  try {
    const recorded = await withTransaction(env.db, async (trx) => {
      // Ours still (another process may have taken the run for dead): lock it to the end.
      const current = await claimRun(trx, run);
      // Waiting for the writers its locks wait for (a bulk writer's catalogue lock, an inbound
      // change of this integration, an API write of a product it updates) and this
      // apply's own statements are bounded by the run's deadline, not by the store's
      // statement timeout, which is for one request's query; a second past it, so that the
      // deadline is what the run reports.
      await dialectOf(trx).allowLongStatements(trx, options.deadlineAt - Date.now() + 1_000);
      // Products and mappings grow as the apply writes them: each batch's lookups planned for
      // the tables as they are then (bench sync, PostgreSQL, two of 20,000 products one after
      // the other: 44.2 s with the prepared statements' cached plans, 30.4 s planned each run).
      await dialectOf(trx).planEachRun(trx);
      // The integration's mappings and products are decided on below: its apply lock first
      // (applies of other integrations go on side by side).
      await lockIntegrationApply(trx, integration.id);
      const active = await countActiveMappedProducts(trx, integration.id);
      await writeStaged(env, trx, integration.id, run.id, {
        now,
        counts,
        pacer,
        signal,
        pageSize: Math.min(batchSize, APPLY_PAGE),
        progress: () => options.onProgress?.(counts.fetched, total),
      });
      if (!options.force && active > 0 && counts.deactivated > maxDrop * active) {
        throw new Held(
          `held: this run would make ${counts.deactivated} of the integration's ${active} active products inactive ` +
            `(${percent(counts.deactivated / active)}), more than settings.max_drop (${percent(maxDrop)}). ` +
            'Nothing was changed. Check the source; to apply it anyway, sync with force.',
        );
      }
      signal.throwIfAborted();
      return recordOutcome(env, trx, current, {
        status: 'succeeded',
        counts,
        ...(state ? { state } : {}),
      });
    });
    return { status: 'succeeded', counts, recorded };
  } catch (err) {
    if (err instanceof Held) return { status: 'held', error: err.reason, counts };
    // Nothing was applied: the counts of what was read only.
    Object.assign(counts, stagedCounts(before));
    throw err;
  }
}

/**
 * In the final transaction: the run's staged items written a page at a time (the event loop
 * gets its turns between pages and items: `pacer`), then the mappings it did not stage made
 * inactive.
 */
async function writeStaged(
  env: IntegrationEnv,
  trx: Executor,
  integrationId: string,
  runId: string,
  apply: {
    now: Date;
    counts: SyncCounts;
    pacer: Pacer;
    signal: AbortSignal;
    pageSize: number;
    progress: () => void;
  },
): Promise<void> {
  const { now, counts, pacer, signal, pageSize } = apply;
  let after = 0;
  for (let pages = 0; ; pages++) {
    signal.throwIfAborted();
    await pacer.turn();
    await env.inApply?.(pages);
    const page = await pageStagedPayloads(trx, runId, after, pageSize);
    if (page.length === 0) break;
    after = page[page.length - 1]!.seq;
    await applyItems(
      trx,
      integrationId,
      page.map((r) => JSON.parse(r.payload) as SourceItem),
      { defaultCurrency: env.defaultCurrency, now, counts, counted: true, pacer },
    );
    apply.progress();
  }
  await deactivateUnstaged(trx, integrationId, runId, {
    now,
    counts,
    batchSize: pageSize,
    signal,
    pacer,
  });
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

/** The run's row, still running and ours, locked to the end of the transaction. */
async function claimRun(trx: Executor, run: SyncRunRow): Promise<SyncRunRow> {
  await updateSyncRun(trx, run.id, { heartbeat_ms: Date.now() });
  const current = await findSyncRun(trx, run.id);
  if (!current || current.status !== 'running' || current.owner !== run.owner) {
    throw new Error('the run was ended by another process while it ran');
  }
  return current;
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
 * Records the end of a run that is still running, in a transaction of its own. `ifFree`: not
 * when another transaction holds the run's row, and undefined unless this call ended it.
 */
async function finishRun(
  env: IntegrationEnv,
  run: SyncRunRow,
  outcome: Outcome,
  options: { ifFree: true },
): Promise<SyncRun | undefined>;
async function finishRun(env: IntegrationEnv, run: SyncRunRow, outcome: Outcome): Promise<SyncRun>;
async function finishRun(
  env: IntegrationEnv,
  run: SyncRunRow,
  outcome: Outcome,
  options: { ifFree?: boolean } = {},
): Promise<SyncRun | undefined> {
  return withTransaction(env.db, async (trx) => {
    const current = await findSyncRun(trx, run.id, options.ifFree ? 'skip locked' : true);
    if (!current) return options.ifFree ? undefined : presentSyncRun(run);
    if (current.status !== 'running') return options.ifFree ? undefined : presentSyncRun(current);
    return recordOutcome(env, trx, current, outcome);
  });
}

const OUTCOME_EVENTS = {
  succeeded: 'integration.sync.completed',
  failed: 'integration.sync.failed',
  held: 'integration.sync.held',
} as const;

/**
 * Records the end of a run, the integration's new state and the events, in the caller's
 * transaction: integration.sync.completed, .failed or .held; integration.connected when a
 * good run brings back an integration in error, integration.disconnected when the platform
 * refused the credentials. A held run leaves the integration as it was.
 */
async function recordOutcome(
  env: IntegrationEnv,
  trx: Executor,
  current: SyncRunRow,
  outcome: Outcome,
): Promise<SyncRun> {
  const now = env.now();
  const finished: SyncRunRow = {
    ...current,
    ...progressOf(outcome.counts),
    status: outcome.status,
    finished_at: now.toISOString(),
    duration_ms: Math.max(0, now.getTime() - Date.parse(current.started_at)),
    error: outcome.status === 'succeeded' ? null : outcome.error,
  };
  await updateSyncRun(trx, current.id, finished);
  await pruneSyncRuns(trx, current.integration_id, HISTORY_KEPT);
  const syncRun = presentSyncRun(finished);
  const integration = await findIntegrationById(trx, current.integration_id, true);
  if (!integration) return syncRun;
  const patch: IntegrationRowUpdate = {
    updated_at: now.toISOString(),
    product_count: await countLiveMappings(trx, current.integration_id),
  };
  if (outcome.status === 'succeeded') {
    patch.last_sync_at = now.toISOString();
    patch.last_error = null;
    if (outcome.state) patch.state = JSON.stringify(outcome.state);
    if (integration.status === 'error') patch.status = 'connected';
  } else if (outcome.status === 'failed') {
    patch.last_error = outcome.error;
    if (outcome.auth && integration.status === 'connected') patch.status = 'error';
  }
  await updateIntegrationRow(trx, current.integration_id, patch);
  const after = presentIntegration({ ...integration, ...patch } as IntegrationRow);
  await recordEvent(trx, OUTCOME_EVENTS[outcome.status], syncRun, now);
  if (patch.status === 'connected') await recordEvent(trx, 'integration.connected', after, now);
  if (patch.status === 'error') await recordEvent(trx, 'integration.disconnected', after, now);
  return syncRun;
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
