import { dialectOf } from '../dialect.js';
import type { Kysely } from 'kysely';
import { insertInChunks } from '../insert-in-chunks.js';
import type { Executor } from '../transaction.js';
import { joinProductWrites } from './products.js';
import type {
  Database,
  IntegrationProductRow,
  IntegrationRow,
  IntegrationRowUpdate,
  NewIntegrationRow,
  NewSyncRunRow,
  SyncRunRow,
  SyncRunStatus,
  SyncRunRowUpdate,
  SyncStagedItemRow,
} from '../schema.js';

// --- integrations ---

/**
 * The row by id; with `lock`, locked to the end of the transaction (FOR UPDATE on
 * PostgreSQL) for a read-decide-write path that decides on it.
 */
export async function findIntegrationById(
  db: Executor,
  id: string,
  lock = false,
): Promise<IntegrationRow | undefined> {
  const query = db.selectFrom('integrations').selectAll().where('id', '=', id);
  return (lock ? dialectOf(db).lockForUpdate(query) : query).executeTakeFirst();
}

/**
 * Whether the integration exists, its row kept to the end of the transaction (PostgreSQL FOR
 * KEY SHARE: a delete waits for this transaction, an apply under lockIntegrationApply does not
 * hold this one up). For a sync's start, which the one-running-run index decides.
 */
export async function lockIntegrationExists(trx: Executor, id: string): Promise<boolean> {
  const query = trx.selectFrom('integrations').select('id').where('id', '=', id);
  const locked = dialectOf(trx).name === 'sqlite' ? query : query.forKeyShare();
  return (await locked.executeTakeFirst()) !== undefined;
}

/** Transactions and the integrations whose apply they hold (see lockIntegrationApply). */
const applying = new WeakMap<object, Set<string>>();

/**
 * Called first in a transaction that applies an integration's items (a sync's apply, an
 * inbound webhook's change): joins the catalogue's writers (joinProductWrites: after a bulk
 * writer, before any product's row lock) and locks the integration's row (PostgreSQL FOR NO
 * KEY UPDATE) to the end. One apply per integration at a time, so its mappings are decided by
 * one writer; applies of different integrations run side by side, each product they write
 * locked as an API write locks it. A sync's start (lockIntegrationExists) does not wait for it;
 * a change of the integration's own row (settings, delete) does. SQLite's write transaction
 * already excludes every other.
 */
export async function lockIntegrationApply(trx: Executor, integrationId: string): Promise<void> {
  if (!trx.isTransaction || dialectOf(trx).name === 'sqlite') return;
  const held = applying.get(trx) ?? new Set<string>();
  if (held.has(integrationId)) return;
  await joinProductWrites(trx);
  await trx
    .selectFrom('integrations')
    .select('id')
    .where('id', '=', integrationId)
    .forNoKeyUpdate()
    .execute();
  held.add(integrationId);
  applying.set(trx, held);
}

export async function listIntegrationRows(
  db: Executor,
  page: { limit: number; offset: number },
): Promise<IntegrationRow[]> {
  return db
    .selectFrom('integrations')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Every integration, oldest first (the CLI, the schedule, key rotation). */
/** Every integration; with `lock`, each locked to the end of the transaction (FOR UPDATE). */
export async function listAllIntegrationRows(
  db: Executor,
  lock = false,
): Promise<IntegrationRow[]> {
  const query = db.selectFrom('integrations').selectAll().orderBy('created_at').orderBy('id');
  return (lock ? dialectOf(db).lockForUpdate(query) : query).execute();
}

export async function countIntegrations(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('integrations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertIntegration(db: Executor, row: NewIntegrationRow): Promise<void> {
  await db.insertInto('integrations').values(row).execute();
}

export async function updateIntegrationRow(
  db: Executor,
  id: string,
  patch: IntegrationRowUpdate,
): Promise<void> {
  await db.updateTable('integrations').set(patch).where('id', '=', id).execute();
}

export async function deleteIntegrationRow(db: Executor, id: string): Promise<void> {
  // Children first: not every store enforces the foreign keys' cascade.
  await db
    .deleteFrom('sync_staged_items')
    .where('run_id', 'in', db.selectFrom('sync_runs').select('id').where('integration_id', '=', id))
    .execute();
  await db.deleteFrom('integration_webhook_receipts').where('integration_id', '=', id).execute();
  await db.deleteFrom('integration_products').where('integration_id', '=', id).execute();
  await db.deleteFrom('sync_runs').where('integration_id', '=', id).execute();
  await db.deleteFrom('integrations').where('id', '=', id).execute();
}

// --- the mapping of platform items to products ---

export async function findMappings(
  db: Executor,
  integrationId: string,
  externalIds: string[],
): Promise<(IntegrationProductRow & { present: number })[]> {
  if (externalIds.length === 0) return [];
  return db
    .selectFrom('integration_products as m')
    .leftJoin('products as p', 'p.id', 'm.product_id')
    .selectAll('m')
    .select((eb) => eb.case().when('p.id', 'is not', null).then(1).else(0).end().as('present'))
    .where('m.integration_id', '=', integrationId)
    .where('m.external_id', 'in', externalIds)
    .execute();
}

export async function insertMappings(db: Executor, rows: IntegrationProductRow[]): Promise<void> {
  await insertInChunks(db as Kysely<Database>, 'integration_products', rows, { maxRows: 100 });
}

export async function updateMapping(
  db: Executor,
  integrationId: string,
  externalId: string,
  patch: Partial<Pick<IntegrationProductRow, 'fingerprint' | 'group_id' | 'product_id'>> & {
    updated_at: string;
  },
): Promise<void> {
  await db
    .updateTable('integration_products')
    .set(patch)
    .where('integration_id', '=', integrationId)
    .where('external_id', '=', externalId)
    .execute();
}

/** The live mappings of some groups (an inbound webhook's products). */
export async function findLiveMappingsOfGroups(
  db: Executor,
  integrationId: string,
  groupIds: string[],
): Promise<Pick<IntegrationProductRow, 'external_id' | 'product_id' | 'group_id'>[]> {
  if (groupIds.length === 0) return [];
  return db
    .selectFrom('integration_products')
    .select(['external_id', 'product_id', 'group_id'])
    .where('integration_id', '=', integrationId)
    .where('group_id', 'in', groupIds)
    .where('fingerprint', 'is not', null)
    .execute();
}

/**
 * A page of live mappings (by external id after `after`) that the staged items of a run do
 * not list: the items gone from the platform.
 */
export async function pageUnstagedLiveMappings(
  db: Executor,
  integrationId: string,
  runId: string,
  after: string | null,
  limit: number,
): Promise<Pick<IntegrationProductRow, 'external_id' | 'product_id'>[]> {
  let q = db
    .selectFrom('integration_products as m')
    .select(['m.external_id', 'm.product_id'])
    .where('m.integration_id', '=', integrationId)
    .where('m.fingerprint', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('sync_staged_items as s')
            .select('s.seq')
            .where('s.run_id', '=', runId)
            .whereRef('s.external_id', '=', 'm.external_id'),
        ),
      ),
    );
  if (after !== null) q = q.where('m.external_id', '>', after);
  return q.orderBy('m.external_id').limit(limit).execute();
}

/** The integration's products that are not inactive (live mappings to existing products). */
export async function countActiveMappedProducts(
  db: Executor,
  integrationId: string,
): Promise<number> {
  const row = await db
    .selectFrom('integration_products as m')
    .innerJoin('products as p', 'p.id', 'm.product_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('m.integration_id', '=', integrationId)
    .where('m.fingerprint', 'is not', null)
    .where('p.status', '!=', 'inactive')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function countLiveMappings(db: Executor, integrationId: string): Promise<number> {
  const row = await db
    .selectFrom('integration_products')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('integration_id', '=', integrationId)
    .where('fingerprint', 'is not', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

// --- sync runs ---

export async function insertSyncRun(db: Executor, row: NewSyncRunRow): Promise<void> {
  await db.insertInto('sync_runs').values(row).execute();
}

export async function updateSyncRun(
  db: Executor,
  id: string,
  patch: SyncRunRowUpdate,
): Promise<void> {
  await db.updateTable('sync_runs').set(patch).where('id', '=', id).execute();
}

/**
 * Writes a run's heartbeat unless its row is locked (PostgreSQL SKIP LOCKED): the run's own
 * apply holds it to its commit, and a heartbeat that waited would hold a connection of the
 * pool as long. Whether it was written.
 */
export async function beatSyncRun(db: Executor, id: string, ms: number): Promise<boolean> {
  const free = dialectOf(db).lockSkipLocked(
    db.selectFrom('sync_runs').select('id').where('id', '=', id),
  );
  const result = await db
    .updateTable('sync_runs')
    .set({ heartbeat_ms: ms })
    .where('id', 'in', free)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The row by id; with `lock`, locked to the end of the transaction (FOR UPDATE on
 * PostgreSQL) for a read-decide-write path that decides on it; with 'skip locked', undefined
 * when another transaction holds it (its run's apply, under way).
 */
export async function findSyncRun(
  db: Executor,
  id: string,
  lock: boolean | 'skip locked' = false,
): Promise<SyncRunRow | undefined> {
  const query = db.selectFrom('sync_runs').selectAll().where('id', '=', id);
  const dialect = dialectOf(db);
  if (lock === 'skip locked') return dialect.lockSkipLocked(query).executeTakeFirst();
  return (lock ? dialect.lockForUpdate(query) : query).executeTakeFirst();
}

export async function findRunningSync(
  db: Executor,
  integrationId: string,
): Promise<SyncRunRow | undefined> {
  return db
    .selectFrom('sync_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('status', '=', 'running')
    .executeTakeFirst();
}

export async function listRunningSyncs(db: Executor): Promise<SyncRunRow[]> {
  return db.selectFrom('sync_runs').selectAll().where('status', '=', 'running').execute();
}

export async function findLatestSync(
  db: Executor,
  integrationId: string,
): Promise<SyncRunRow | undefined> {
  return db
    .selectFrom('sync_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Which of an integration's syncs a history shows: all, or those in one state. */
export interface SyncRunFilter {
  status?: SyncRunStatus | undefined;
}

export async function listSyncRunRows(
  db: Executor,
  integrationId: string,
  filter: SyncRunFilter,
  page: { limit: number; offset: number },
): Promise<SyncRunRow[]> {
  return db
    .selectFrom('sync_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status!))
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countSyncRuns(
  db: Executor,
  integrationId: string,
  filter: SyncRunFilter = {},
): Promise<number> {
  const row = await db
    .selectFrom('sync_runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('integration_id', '=', integrationId)
    .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status!))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Deletes an integration's finished runs beyond the newest `keep`. */
export async function pruneSyncRuns(
  db: Executor,
  integrationId: string,
  keep: number,
): Promise<void> {
  const old = db
    .selectFrom('sync_runs')
    .select('id')
    .where('integration_id', '=', integrationId)
    .where('status', '!=', 'running')
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1_000_000_000)
    .offset(keep);
  await db.deleteFrom('sync_runs').where('id', 'in', old).execute();
}

// --- what a running sync has read (applied at its end) ---

export async function insertStagedItems(
  db: Executor,
  rows: readonly SyncStagedItemRow[],
): Promise<void> {
  await insertInChunks(db as Kysely<Database>, 'sync_staged_items', rows, { maxRows: 250 });
}

/** A page of a run's staged items to write (payload set), in the order they were read. */
export async function pageStagedPayloads(
  db: Executor,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<{ seq: number; payload: string }[]> {
  const rows = await db
    .selectFrom('sync_staged_items')
    .select(['seq', 'payload'])
    .where('run_id', '=', runId)
    .where('seq', '>', afterSeq)
    .where('payload', 'is not', null)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), payload: r.payload! }));
}

/**
 * Deletes a run's staged items, `chunk` positions a statement (a run of 30,000 items is not
 * one long statement), awaiting `between` after each.
 */
export async function deleteStagedItems(
  db: Executor,
  runId: string,
  options: { chunk?: number; between?: () => Promise<void> } = {},
): Promise<void> {
  const chunk = options.chunk ?? 2000;
  // Positions run from 1 without a gap: the first empty range is the end.
  for (let upTo = chunk; ; upTo += chunk) {
    const { numDeletedRows } = await db
      .deleteFrom('sync_staged_items')
      .where('run_id', '=', runId)
      .where('seq', '<=', upTo)
      .executeTakeFirst();
    if (Number(numDeletedRows) === 0) break;
    await options.between?.();
  }
  await db.deleteFrom('sync_staged_items').where('run_id', '=', runId).execute();
}

/** Deletes what runs that are no longer running had staged (left by a process that died). */
export async function deleteStagedItemsOfEndedRuns(db: Executor): Promise<void> {
  await db
    .deleteFrom('sync_staged_items')
    .where(
      'run_id',
      'not in',
      db.selectFrom('sync_runs').select('id').where('status', '=', 'running'),
    )
    .execute();
}

// --- inbound webhook receipts ---

/** Records a delivery id; false when it was already recorded (a replay). */
export async function insertWebhookReceipt(
  db: Executor,
  integrationId: string,
  webhookId: string,
  at: string,
): Promise<boolean> {
  const seen = await db
    .selectFrom('integration_webhook_receipts')
    .select('webhook_id')
    .where('integration_id', '=', integrationId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
  if (seen) return false;
  await db
    .insertInto('integration_webhook_receipts')
    .values({ integration_id: integrationId, webhook_id: webhookId, received_at: at })
    .execute();
  return true;
}

export async function pruneWebhookReceipts(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('integration_webhook_receipts').where('received_at', '<', before).execute();
}
