import type { Transaction } from 'kysely';
import type { Insertable } from 'kysely';
import type { Database, EventRow, EventTable } from '../schema.js';
import type { Db } from '../store.js';

export async function insertEvent(
  db: Db | Transaction<Database>,
  row: Insertable<EventTable>,
): Promise<void> {
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
