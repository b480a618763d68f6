import type { Insertable, Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';
import { insertInChunks } from '../insert-in-chunks.js';
import { isSqlite } from '../sqlite/dialect-sql.js';
import type { Database } from '../schema.js';
import type { EventRow, EventTable } from '../schema.js';
import type { Db } from '../store.js';
import type { Executor } from '../transaction.js';

/**
 * Runs an outbox write holding the outbox's write lock (DialectSql.lockOutboxForWrite), in
 * the caller's transaction or, outside one, in a transaction of its own.
 */
async function writeOutbox(db: Executor, write: (trx: Executor) => Promise<void>): Promise<void> {
  // SQLite commits one writer at a time: no lock to take (and no transaction to open).
  if (isSqlite(db)) return write(db);
  const dialect = dialectOf(db);
  if (db.isTransaction) {
    await dialect.lockOutboxForWrite(db);
    return write(db);
  }
  await (db as Kysely<Database>).transaction().execute(async (trx) => {
    await dialect.lockOutboxForWrite(trx);
    await write(trx);
  });
}

export async function insertEvent(db: Executor, row: Insertable<EventTable>): Promise<void> {
  await writeOutbox(db, async (trx) => {
    await trx.insertInto('events').values(row).execute();
  });
}

/** Inserts events in order (multi-row statements). */
export async function insertEvents(db: Executor, rows: Insertable<EventTable>[]): Promise<void> {
  await writeOutbox(db, async (trx) => {
    await insertInChunks(trx as Kysely<Database>, 'events', rows, { maxRows: 100 });
  });
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
