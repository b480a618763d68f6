import type { Executor } from '../transaction.js';
import type { ExpressionBuilder } from 'kysely';
import type {
  Database,
  FeedDeliveryRow,
  FeedDeliveryRowUpdate,
  FeedDeliveryStatus,
} from '../schema.js';

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

/** Which of a feed's deliveries a list shows: all, or those in one state. */
export interface FeedDeliveryFilter {
  status?: FeedDeliveryStatus | undefined;
}

/** A feed's deliveries, newest first. */
export async function listFeedDeliveryRows(
  db: Executor,
  feedId: string,
  filter: FeedDeliveryFilter,
  page: { limit: number; offset: number },
): Promise<FeedDeliveryRow[]> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countFeedDeliveries(
  db: Executor,
  feedId: string,
  filter: FeedDeliveryFilter = {},
): Promise<number> {
  const row = await db
    .selectFrom('feed_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('feed_id', '=', feedId)
    .$if(filter.status !== undefined, (qb) => qb.where('status', '=', filter.status!))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A runner's claim of a delivery (the lease it holds while sending). */
export interface DeliveryLease {
  /** The runner's token (`host/pid/random`). */
  owner: string;
  /** Now, as stored: a lease that lapsed before it may be retaken. */
  now: string;
  /** When the new lease lapses. */
  until: string;
}

/** A `delivering` row whose lease has lapsed (or that has none: it predates leases). */
function lapsed(eb: ExpressionBuilder<Database, 'feed_deliveries'>, now: string) {
  return eb.and([
    eb('status', '=', 'delivering'),
    eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]),
  ]);
}

/**
 * Deliveries to send now: pending ones, failed ones whose next attempt is due, and those
 * whose runner's lease lapsed mid-send (its process died).
 */
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
        lapsed(eb, now),
      ]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Claims a delivery for sending (one runner wins): pending, failed and due, or delivering
 * with a lapsed lease becomes delivering, leased to this runner until `lease.until`.
 * Answers whether this caller won.
 */
export async function claimFeedDelivery(
  db: Executor,
  id: string,
  lease: DeliveryLease,
): Promise<boolean> {
  const result = await db
    .updateTable('feed_deliveries')
    .set({
      status: 'delivering',
      claimed_by: lease.owner,
      claimed_until: lease.until,
      started_at: lease.now,
      next_attempt_at: null,
    })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'pending'),
        eb.and([eb('status', '=', 'failed'), eb('next_attempt_at', '<=', lease.now)]),
        lapsed(eb, lease.now),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a runner's lease on the delivery it sends; false when it no longer holds it. */
export async function renewFeedDeliveryLease(
  db: Executor,
  id: string,
  owner: string,
  until: string,
): Promise<boolean> {
  const result = await db
    .updateTable('feed_deliveries')
    .set({ claimed_until: until })
    .where('id', '=', id)
    .where('status', '=', 'delivering')
    .where('claimed_by', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records the end of an attempt, only by the runner holding the delivery: false when its
 * lease lapsed and another runner retook it (that runner records the end).
 */
export async function finishFeedDelivery(
  db: Executor,
  id: string,
  owner: string,
  patch: FeedDeliveryRowUpdate,
): Promise<boolean> {
  const result = await db
    .updateTable('feed_deliveries')
    .set({ ...patch, claimed_by: null, claimed_until: null })
    .where('id', '=', id)
    .where('status', '=', 'delivering')
    .where('claimed_by', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A feed's delivery being sent (or left mid-send by a dead runner), if any. */
export async function findDeliveringDelivery(
  db: Executor,
  feedId: string,
): Promise<FeedDeliveryRow | undefined> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .where('status', '=', 'delivering')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Older deliveries of a feed still waiting (pending, held, failed with a retry, or left
 * mid-send by a runner whose lease lapsed): superseded by a new one.
 */
export async function listWaitingDeliveries(
  db: Executor,
  feedId: string,
  now: string,
): Promise<FeedDeliveryRow[]> {
  return db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('feed_id', '=', feedId)
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['pending', 'held']),
        eb.and([eb('status', '=', 'failed'), eb('next_attempt_at', 'is not', null)]),
        lapsed(eb, now),
      ]),
    )
    .execute();
}
