import type { Executor } from '../transaction.js';
import type { FeedDeliveryRow, FeedDeliveryRowUpdate } from '../schema.js';

export async function insertFeedDelivery(db: Executor, row: FeedDeliveryRow): Promise<void> {
  await db.insertInto('feed_deliveries').values(row).execute();
}

export async function updateFeedDelivery(
  db: Executor,
  id: string,
  patch: FeedDeliveryRowUpdate,
): Promise<void> {
  await db.updateTable('feed_deliveries').set(patch).where('id', '=', id).execute();
}

export async function findFeedDelivery(
  db: Executor,
  feedId: string,
  id: string,
): Promise<FeedDeliveryRow | undefined> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The last delivery that reached the remote: what "identical" and "a drop" compare with. */
export async function findLastDelivered(
  db: Executor,
  feedId: string,
): Promise<FeedDeliveryRow | undefined> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .where('status', '=', 'delivered')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A feed's deliveries, newest first. */
export async function listFeedDeliveryRows(
  db: Executor,
  feedId: string,
  page: { limit: number; offset: number },
): Promise<FeedDeliveryRow[]> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countFeedDeliveries(db: Executor, feedId: string): Promise<number> {
  const row = await db
    .selectFrom('feed_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('feed_id', '=', feedId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Deliveries to send now: pending ones, and failed ones whose next attempt is due. */
export async function listDueDeliveries(
  db: Executor,
  now: string,
  limit: number,
): Promise<FeedDeliveryRow[]> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('status', '=', 'pending'),
        eb.and([eb('status', '=', 'failed'), eb('next_attempt_at', '<=', now)]),
      ]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Claims a delivery for sending (one process wins): pending, or failed and due, becomes
 * delivering. Answers whether this caller won.
 */
export async function claimFeedDelivery(
  db: Executor,
  id: string,
  from: 'pending' | 'failed',
  startedAt: string,
): Promise<boolean> {
  const result = await db
    .updateTable('feed_deliveries')
    .set({ status: 'delivering', started_at: startedAt, next_attempt_at: null })
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Older deliveries of a feed still waiting (pending, held, failed with a retry): superseded. */
export async function listWaitingDeliveries(
  db: Executor,
  feedId: string,
): Promise<FeedDeliveryRow[]> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['pending', 'held']),
        eb.and([eb('status', '=', 'failed'), eb('next_attempt_at', 'is not', null)]),
      ]),
    )
    .execute();
}
