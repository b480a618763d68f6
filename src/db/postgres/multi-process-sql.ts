import { sql, type QueryExecutorProvider } from 'kysely';
import type { DialectSql } from '../dialect.js';
import { checkIdentifier } from '../identifier.js';
import type { Executor } from '../transaction.js';

/**
 * PostgreSQL's side of the several-processes members of DialectSql (issue 14, branch
 * pgmulti), spread into the PostgreSQL DialectSql (db/postgres/dialect-sql.ts).
 */

/** The advisory lock key the outbox writers share and its reader takes alone ('outbox'). */
const OUTBOX_LOCK = 0x6f7574626f78;

export const postgresMultiProcessSql: Pick<
  DialectSql,
  'lockSkipLocked' | 'lockOutboxForWrite' | 'lockOutbox' | 'continueSequences'
> = {
  lockSkipLocked: (query) => query.forUpdate().skipLocked(),
  // Transaction-level locks: released at commit or rollback, whatever happens to the process.
  lockOutboxForWrite: async (trx: Executor) => {
    await sql`select pg_advisory_xact_lock_shared(${sql.lit(OUTBOX_LOCK)})`.execute(trx);
  },
  lockOutbox: async (trx: Executor) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(OUTBOX_LOCK)})`.execute(trx);
  },
  continueSequences: async (db: QueryExecutorProvider, table: string) => {
    const name = checkIdentifier('continueSequences', table);
    // Every column of the table that owns a sequence (serial or identity).
    const { rows } = await sql<{ column_name: string; seq: string }>`
      select column_name, pg_get_serial_sequence(${name}, column_name) as seq
      from information_schema.columns
      where table_schema = current_schema() and table_name = ${name}
        and pg_get_serial_sequence(${name}, column_name) is not null`.execute(db);
    for (const { column_name: column, seq } of rows) {
      const col = checkIdentifier('continueSequences', column);
      // is_called false on an empty table: the next id is 1, as on a fresh database.
      await sql`select setval(${seq}, coalesce((select max(${sql.ref(col)}) from ${sql.table(name)}), 0) + 1, false)`.execute(
        db,
      );
    }
  },
};
