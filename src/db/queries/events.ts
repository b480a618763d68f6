import type { Insertable } from 'kysely';
import type { EventRow, EventTable } from '../schema.js';
import type { Db } from '../store.js';
import type { Executor } from '../transaction.js';

export async function insertEvent(db: Executor, row: Insertable<EventTable>): Promise<void> {
  await db.insertInto('events').values(row).execute();
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
