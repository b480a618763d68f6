import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';
import { preparedBatchQuery } from '../prepared.js';
import type { Executor } from '../transaction.js';
import type {
  Database,
  NewWebhookRow,
  WebhookDisabledReason,
  WebhookRow,
  WebhookRowUpdate,
} from '../schema.js';

/**
 * The row by id; with `lock`, locked to the end of the transaction (FOR UPDATE on
 * PostgreSQL) for a read-decide-write path that decides on it.
 */
export async function findWebhookById(
  db: Executor,
  id: string,
  lock = false,
): Promise<WebhookRow | undefined> {
  const query = db.selectFrom('webhooks').selectAll().where('id', '=', id);
  return (lock ? dialectOf(db).lockForUpdate(query) : query).executeTakeFirst();
}

export async function listWebhookRows(
  db: Executor,
  page: { limit: number; offset: number },
): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countWebhooks(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The endpoints the worker delivers to. */
export async function listActiveWebhookRows(db: Executor): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('status', '=', 'active')
    .orderBy('id')
    .execute();
}

export async function insertWebhook(db: Executor, row: NewWebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function updateWebhookRow(
  db: Executor,
  id: string,
  patch: WebhookRowUpdate,
): Promise<void> {
  await db.updateTable('webhooks').set(patch).where('id', '=', id).execute();
}

/** Deletes an endpoint; its deliveries and their attempts go with it (foreign-key cascade). */
export async function deleteWebhookRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The newest outbox position: a new or re-enabled endpoint starts after it. */
export async function latestEventSeq(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max<number | null>('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Records the start of a failure run (kept when one is already running). */
export async function markWebhookFailing(db: Executor, id: string, at: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ failing_since: at })
    .where('id', '=', id)
    .where('failing_since', 'is', null)
    .execute();
}

/**
 * Locks endpoints' rows to the end of the transaction, in id order (FOR UPDATE on PostgreSQL):
 * a transaction that changes an endpoint and its deliveries takes the endpoint first, as an
 * update of the endpoint does, so the two never wait on each other in a circle.
 */
export async function lockWebhookRows(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const dialect = dialectOf(db);
  if (dialect.name === 'sqlite') return;
  const unique = [...new Set(ids)].sort();
  await dialect
    .lockForUpdate(db.selectFrom('webhooks').select('id').where('id', 'in', unique).orderBy('id'))
    .execute();
}

const clearFailingRows = preparedBatchQuery((db: Kysely<Database>, slot, count) =>
  db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where(
      'id',
      'in',
      Array.from({ length: count }, (_, i) => slot(i)),
    )
    .where('failing_since', 'is not', null),
);

/** Ends the failure runs of endpoints that just succeeded (one statement for a batch). */
export async function clearWebhooksFailing(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const unique = [...new Set(ids)];
  await clearFailingRows(db, unique.length, unique);
}

export async function disableWebhookRow(
  db: Executor,
  id: string,
  reason: WebhookDisabledReason,
  at: string,
): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: at, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .execute();
}
