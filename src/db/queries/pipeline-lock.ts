import type { Selectable } from 'kysely';
import type { PipelineLockTable, PipelineLockWaiterTable } from '../schema.js';
import type { Db } from '../store.js';

export type PipelineLockRow = Selectable<PipelineLockTable>;
export type PipelineLockWaiterRow = Selectable<PipelineLockWaiterTable>;

/** Who holds the lock, and since when. */
export interface LockHolder {
  token: string;
  pid: number;
  hostname: string;
  acquired_at: string;
  heartbeat_ms: number;
}

/** Queues a waiter; returns its ticket (waiters are served in ticket order). */
export async function insertLockWaiter(
  db: Db,
  waiter: { token: string; pid: number; hostname: string; heartbeat_ms: number },
): Promise<number> {
  // RETURNING, not insertId: PostgreSQL reports no insert id.
  const queued = await db
    .insertInto('pipeline_lock_waiters')
    .values(waiter)
    .returning('ticket')
    .executeTakeFirstOrThrow();
  return Number(queued.ticket);
}

export function selectLockWaitersBefore(db: Db, ticket: number): Promise<PipelineLockWaiterRow[]> {
  return db
    .selectFrom('pipeline_lock_waiters')
    .selectAll()
    .where('ticket', '<', ticket)
    .orderBy('ticket')
    .execute();
}

export async function touchLockWaiter(db: Db, ticket: number, heartbeatMs: number): Promise<void> {
  await db
    .updateTable('pipeline_lock_waiters')
    .set({ heartbeat_ms: heartbeatMs })
    .where('ticket', '=', ticket)
    .execute();
}

export async function deleteLockWaiter(db: Db, ticket: number): Promise<void> {
  await db.deleteFrom('pipeline_lock_waiters').where('ticket', '=', ticket).execute();
}

export function selectLock(db: Db, name: string): Promise<PipelineLockRow> {
  return db
    .selectFrom('pipeline_lock')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
}

/**
 * Compare-and-set: takes the lock for `holder` if it is still held by `expected` (null: free).
 * Returns whether it was taken. One UPDATE whose WHERE names the expected holder: on SQLite
 * writers take turns; on PostgreSQL (READ COMMITTED) a second UPDATE of the row waits for the
 * first to commit and then re-checks its WHERE against the row the first wrote, so of two
 * processes racing from the same `expected`, exactly one updates a row (test/pipeline/
 * lock-processes.test.ts races them).
 */
export async function claimLock(
  db: Db,
  name: string,
  expected: string | null,
  holder: LockHolder,
): Promise<boolean> {
  const claimed = await db
    .updateTable('pipeline_lock')
    .set({
      holder: holder.token,
      pid: holder.pid,
      hostname: holder.hostname,
      acquired_at: holder.acquired_at,
      heartbeat_ms: holder.heartbeat_ms,
    })
    .where('name', '=', name)
    .where((eb) => (expected === null ? eb('holder', 'is', null) : eb('holder', '=', expected)))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/** Renews the holder's heartbeat; false when `token` no longer holds the lock. */
export async function touchLock(
  db: Db,
  name: string,
  token: string,
  heartbeatMs: number,
): Promise<boolean> {
  const res = await db
    .updateTable('pipeline_lock')
    .set({ heartbeat_ms: heartbeatMs })
    .where('name', '=', name)
    .where('holder', '=', token)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Frees the lock if `token` still holds it. */
export async function releaseLock(db: Db, name: string, token: string): Promise<void> {
  await db
    .updateTable('pipeline_lock')
    .set({ holder: null, pid: null, hostname: null, acquired_at: null, heartbeat_ms: null })
    .where('name', '=', name)
    .where('holder', '=', token)
    .execute();
}
