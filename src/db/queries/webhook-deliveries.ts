import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';
import { insertInChunks } from '../insert-in-chunks.js';
import { preparedBatchQuery } from '../prepared.js';
import type { Executor } from '../transaction.js';
import type {
  Database,
  DeliveryStatus,
  NewWebhookDeliveryRow,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookDeliveryTable,
} from '../schema.js';

// A literal, not a bound parameter: SQLite only uses the partial index on pending deliveries
// when the query's WHERE names the same constant.
const PENDING = sql.lit<DeliveryStatus>('pending');

/** What fan-out needs of an outbox event: not its data. */
export interface EventHead {
  seq: number;
  id: string;
  type: string;
}

export async function listEventHeadsAfter(
  db: Executor,
  afterSeq: number,
  limit: number,
): Promise<EventHead[]> {
  return db
    .selectFrom('events')
    .select(['seq', 'id', 'type'])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** Inserts in chunks that stay under the database's bound-parameter limit. */
export async function insertDeliveries(db: Executor, rows: NewWebhookDeliveryRow[]): Promise<void> {
  await insertInChunks(db, 'webhook_deliveries', rows, { maxRows: 500 });
}

export async function advanceEventCursor(
  db: Executor,
  webhookIds: string[],
  seq: number,
): Promise<void> {
  if (webhookIds.length === 0) return;
  await db
    .updateTable('webhooks')
    .set({ event_cursor: seq })
    .where('id', 'in', webhookIds)
    .where('event_cursor', '<', seq)
    .execute();
}

/** A pending delivery with what its body is built from. */
export interface QueuedDelivery {
  seq: number;
  id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  next_attempt_at: string | null;
  /** The event's data, JSON text exactly as recorded. */
  data: string;
  event_created_at: string;
  /** The worker that holds it (see claimQueuedDelivery), and until when. */
  lease_owner: string | null;
  lease_expires_at: string | null;
}

/** An endpoint's queue: its oldest pending outbox deliveries, in event order. */
export async function listQueuedDeliveries(
  db: Executor,
  webhookId: string,
  limit: number,
): Promise<QueuedDelivery[]> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.seq', 'd.event_seq')
    .select([
      'd.seq',
      'd.id',
      'd.event_id',
      'd.event_type',
      'd.attempts',
      'd.next_attempt_at',
      'e.data',
      'e.created_at as event_created_at',
      'd.lease_owner',
      'd.lease_expires_at',
    ])
    .where('d.webhook_id', '=', webhookId)
    .where('d.status', '=', PENDING)
    .orderBy('d.seq')
    .limit(limit)
    .execute();
}

const ATTEMPT_COLUMNS = [
  'delivery_seq',
  'attempt',
  'trigger',
  'started_at',
  'status_code',
  'duration_ms',
  'error',
  'response_body',
] as const satisfies readonly (keyof WebhookAttemptRow)[];

const insertAttemptRows = preparedBatchQuery((db: Kysely<Database>, slot, count) =>
  db
    .insertInto('webhook_attempts')
    .values(
      Array.from(
        { length: count },
        (_, r) =>
          Object.fromEntries(
            ATTEMPT_COLUMNS.map((column, c) => [column, slot(r * ATTEMPT_COLUMNS.length + c)]),
          ) as unknown as WebhookAttemptRow,
      ),
    ),
);

/**
 * Inserts attempt rows, many in one statement (the worker records attempts in batches),
 * compiled once per batch size.
 */
export async function insertAttempts(db: Executor, rows: WebhookAttemptRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    const values: unknown[] = [];
    for (const row of chunk) for (const column of ATTEMPT_COLUMNS) values.push(row[column]);
    await insertAttemptRows(db, chunk.length, values);
  }
}

/**
 * PostgreSQL: the record of attempts that all succeeded, in one statement and so one round
 * trip (its own transaction) where a transaction of its parts takes six: the attempts
 * inserted, their deliveries settled (their leases end with them) and their endpoints' failure
 * runs ended, those rows taken in id order as every writer of several takes them. On one
 * process the record is the lanes' turn-taking point (issue 25: webhooks on PostgreSQL).
 */
export async function recordSucceededAttemptsPg(
  db: Executor,
  rows: WebhookAttemptRow[],
  webhookIds: string[],
): Promise<void> {
  if (rows.length === 0) return;
  const column = <K extends keyof WebhookAttemptRow>(k: K) => rows.map((r) => r[k]);
  const seqs = column('delivery_seq');
  await sql`with attempts as (
      insert into webhook_attempts (delivery_seq, attempt, trigger, started_at, status_code,
        duration_ms, error, response_body)
      select * from unnest(${seqs}::integer[], ${column('attempt')}::integer[],
        ${column('trigger')}::text[], ${column('started_at')}::text[],
        ${column('status_code')}::integer[], ${column('duration_ms')}::integer[],
        ${column('error')}::text[], ${column('response_body')}::text[])
    ), settled as (
      update webhook_deliveries set status = 'succeeded', next_attempt_at = null,
        attempts = attempts + 1, lease_owner = null, lease_expires_at = null
      where seq = any(${seqs}::integer[])
    )
    update webhooks set failing_since = null
    where id in (select id from webhooks where id = any(${[...new Set(webhookIds)]}::text[])
      and failing_since is not null order by id for update)`.execute(db);
}

// --- Leases: several processes on one store (issue 14, branch pgmulti) ---

/** A claim of a delivery by a worker. */
export interface Lease {
  /** The worker's token (`host/pid/random`). */
  owner: string;
  /** Now, as stored: a lease that lapsed before it may be taken. */
  now: string;
  /** When the new lease lapses. */
  until: string;
  /** A holder known to be gone (its process no longer exists): its lease may be taken now. */
  gone?: string | undefined;
}

/**
 * Claims the front of an endpoint's queue for a worker: the deliveries `seqs` (in order, the
 * first one the head), those of them still pending, not paused, and not held by another live
 * worker, but only when no delivery of the endpoint before the first is pending: so an
 * endpoint's deliveries go out one at a time, in order, whichever process sends them, and a
 * worker holding a run of them holds the endpoint until it has sent them. One statement; on
 * PostgreSQL its rows are locked with SKIP LOCKED, so two workers racing for them never wait
 * on each other. SQLite runs one writer at a time. Returns the seqs this worker now holds.
 */
export async function claimQueuedDeliveries(
  db: Executor,
  webhookId: string,
  seqs: number[],
  lease: Lease,
): Promise<number[]> {
  if (seqs.length === 0) return [];
  const first = Math.min(...seqs);
  const last = Math.max(...seqs);
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: lease.owner, lease_expires_at: lease.until })
    .where('seq', 'in', (eb) =>
      dialectOf(db).lockSkipLocked(
        eb
          .selectFrom('webhook_deliveries as d')
          .select('d.seq')
          .where('d.seq', 'in', seqs)
          .where('d.webhook_id', '=', webhookId)
          .where('d.status', '=', PENDING)
          // The range as well as the list: the queue's index (webhook_id, seq) then reads
          // just the batch, where with the list alone PostgreSQL read every pending delivery
          // of the endpoint and filtered (35 ms a claim at a backlog of 10,000).
          .where('d.seq', '>=', first)
          .where('d.seq', '<=', last)
          // Not paused (a disabled endpoint's queue). Due-ness is the lane's call: it waits
          // for next_attempt_at by the real clock as well as the service's.
          .where('d.next_attempt_at', 'is not', null)
          .where((w) => leaseIsFree(w, lease))
          .where((w) =>
            w.not(
              w.exists(
                w
                  .selectFrom('webhook_deliveries as e')
                  .select('e.seq')
                  .where('e.webhook_id', '=', webhookId)
                  .where('e.status', '=', PENDING)
                  .where('e.seq', '<', first),
              ),
            ),
          ),
      ),
    )
    .returning('seq')
    .execute();
  return rows.map((r) => Number(r.seq));
}

/** claimQueuedDeliveries for one delivery: whether this worker now holds it. */
export async function claimQueuedDelivery(
  db: Executor,
  webhookId: string,
  seq: number,
  lease: Lease,
): Promise<boolean> {
  return (await claimQueuedDeliveries(db, webhookId, [seq], lease)).length === 1;
}

/** Claims any delivery (a manual retry: outside its endpoint's queue) unless another holds it. */
export async function claimDelivery(db: Executor, seq: number, lease: Lease): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: lease.owner, lease_expires_at: lease.until })
    .where('seq', 'in', (eb) =>
      dialectOf(db).lockSkipLocked(
        eb
          .selectFrom('webhook_deliveries as d')
          .select('d.seq')
          .where('d.seq', '=', seq)
          .where((w) => leaseIsFree(w, lease)),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

function leaseIsFree(
  w: ExpressionBuilder<Database & { d: WebhookDeliveryTable }, 'd'>,
  lease: Lease,
) {
  const free = [
    w('d.lease_owner', 'is', null),
    w('d.lease_owner', '=', lease.owner),
    w('d.lease_expires_at', '<=', lease.now),
  ];
  if (lease.gone) free.push(w('d.lease_owner', '=', lease.gone));
  return w.or(free);
}

/**
 * Extends this worker's leases on the deliveries it still works on. A row another
 * transaction holds is skipped (SKIP LOCKED), never waited for: that is this worker's own
 * record of its attempt (the lease ends with it) or a release, and a renewal that waited on
 * a record taking the same rows in another order could deadlock with it, on PostgreSQL,
 * and so fail the record. A skipped lease is renewed on the next round, long before it lapses.
 */
export async function renewLeases(
  db: Executor,
  owner: string,
  seqs: number[],
  until: string,
): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_expires_at: until })
    .where('seq', 'in', (eb) =>
      dialectOf(db).lockSkipLocked(
        eb
          .selectFrom('webhook_deliveries as d')
          .select('d.seq')
          .where('d.seq', 'in', seqs)
          .where('d.lease_owner', '=', owner),
      ),
    )
    .execute();
}

/** Gives leases back (a worker stopping, an attempt abandoned): others may take them now. */
export async function releaseLeases(db: Executor, owner: string, seqs: number[]): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('seq', 'in', seqs)
    .where('lease_owner', '=', owner)
    .execute();
}

const advanceDeliveryRows = preparedBatchQuery((db: Kysely<Database>, slot, count) =>
  db
    .updateTable('webhook_deliveries')
    .set({
      status: slot(0),
      next_attempt_at: slot(1),
      attempts: sql<number>`attempts + 1`,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where(
      'seq',
      'in',
      Array.from({ length: count }, (_, i) => slot(i + 2)),
    ),
);

/**
 * Counts one more attempt on each delivery and sets the state they share. The attempt is
 * over, so the lease goes too: a retry is claimed again when it is due, by any worker.
 */
export async function advanceDeliveries(
  db: Executor,
  seqs: number[],
  next: { status: DeliveryStatus; next_attempt_at: string | null },
): Promise<void> {
  if (seqs.length === 0) return;
  await advanceDeliveryRows(db, seqs.length, [next.status, next.next_attempt_at, ...seqs]);
}

export async function insertDelivery(db: Executor, row: NewWebhookDeliveryRow): Promise<number> {
  const result = await db
    .insertInto('webhook_deliveries')
    .values(row)
    .returning('seq')
    .executeTakeFirstOrThrow();
  return result.seq;
}

/** A delivery with the outcome of its last attempt. */
export type DeliveryView = WebhookDeliveryRow & {
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  last_attempt_at: string | null;
};

function withLastAttempt(db: Executor) {
  return db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('webhook_attempts as a', (join) =>
      join.onRef('a.delivery_seq', '=', 'd.seq').onRef('a.attempt', '=', 'd.attempts'),
    )
    .selectAll('d')
    .select(['a.status_code', 'a.duration_ms', 'a.error', 'a.started_at as last_attempt_at']);
}

export async function findDelivery(
  db: Executor,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryView | undefined> {
  return withLastAttempt(db)
    .where('d.id', '=', deliveryId)
    .where('d.webhook_id', '=', webhookId)
    .executeTakeFirst();
}

export async function findDeliveryBySeq(
  db: Executor,
  seq: number,
): Promise<DeliveryView | undefined> {
  return withLastAttempt(db).where('d.seq', '=', seq).executeTakeFirst();
}

/** The event of an outbox delivery, for a manual retry. */
export async function findEventBySeq(db: Executor, seq: number) {
  return db.selectFrom('events').selectAll().where('seq', '=', seq).executeTakeFirst();
}

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  event_type?: string | undefined;
}

/** The delivery log of an endpoint, newest first. */
export async function listDeliveryRows(
  db: Executor,
  webhookId: string,
  filter: DeliveryFilter,
  page: { limit: number; offset: number },
): Promise<DeliveryView[]> {
  let q = withLastAttempt(db).where('d.webhook_id', '=', webhookId);
  if (filter.status) q = q.where('d.status', '=', filter.status);
  if (filter.event_type) q = q.where('d.event_type', '=', filter.event_type);
  return q.orderBy('d.seq', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function countDeliveryRows(
  db: Executor,
  webhookId: string,
  filter: DeliveryFilter,
): Promise<number> {
  let q = db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.event_type) q = q.where('event_type', '=', filter.event_type);
  const row = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function listAttemptRows(
  db: Executor,
  deliverySeq: number,
): Promise<WebhookAttemptRow[]> {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_seq', '=', deliverySeq)
    .orderBy('attempt')
    .execute();
}

/** After an endpoint is enabled again: its queue is due now, not at the old retry times. */
export async function makePendingDueNow(db: Executor, webhookId: string, at: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: at })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', PENDING)
    .execute();
}

/** While an endpoint is disabled its queue waits, with no next attempt time. */
export async function pausePendingDeliveries(db: Executor, webhookId: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: null })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', PENDING)
    .execute();
}

/**
 * Forgets up to `limit` settled deliveries (and their attempts) created before a time.
 * Bounded, because SQLite runs a statement to its end on the event loop's thread.
 */
export async function purgeSettledDeliveries(
  db: Executor,
  before: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('seq')
        .where('created_at', '<', before)
        .where('status', '!=', 'pending')
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
