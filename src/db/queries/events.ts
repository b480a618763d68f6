import type { Insertable, Kysely } from 'kysely';
import { insertInChunks } from '../insert-in-chunks.js';
import type { Database } from '../schema.js';
import type { EventRow, EventTable } from '../schema.js';
import type { Db } from '../store.js';
import type { Executor } from '../transaction.js';

/**
 * Outbox writes take no lock of their own: the insert holds the events table's ROW EXCLUSIVE
 * lock until its transaction ends, and that is what the fan-out waits for
 * (DialectSql.lockTableWrites in domain/webhooks/outbox.ts), so it never reads seq N+1 while
 * N may still commit.
 */
export async function insertEvent(db: Executor, row: Insertable<EventTable>): Promise<void> {
  await db.insertInto('events').values(row).execute();
}

/** Inserts events in order (multi-row statements). */
export async function insertEvents(db: Executor, rows: Insertable<EventTable>[]): Promise<void> {
  await insertInChunks(db as Kysely<Database>, 'events', rows, { maxRows: 100 });
}

/** Events after a sequence number, oldest first. */
export function selectEventsAfter(db: Db, afterSeq: number, limit: number): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}
