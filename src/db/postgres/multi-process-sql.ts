import { sql, type QueryExecutorProvider } from 'kysely';
import type { DialectSql } from '../dialect.js';
import { checkIdentifier } from '../identifier.js';
import type { Executor } from '../transaction.js';

/**
 * PostgreSQL's side of the several-processes members of DialectSql (issue 14, branch
 * pgmulti), spread into the PostgreSQL DialectSql (db/postgres/dialect-sql.ts).
 */

/** SET LOCAL of a setting in milliseconds, for the rest of the transaction. */
async function setLocalMs(
  trx: QueryExecutorProvider,
  setting: 'lock_timeout' | 'statement_timeout',
  ms: number,
): Promise<void> {
  // SET takes no bound parameter: a whole number of milliseconds, checked, as its literal.
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`${setting} ${ms} ms is not a number`);
  await sql`set local ${sql.raw(setting)} = ${sql.raw(String(ms))}`.execute(trx);
}

export const postgresMultiProcessSql: Pick<
  DialectSql,
  | 'lockSkipLocked'
  | 'lockForUpdate'
  | 'lockTableWrites'
  | 'continueSequences'
  | 'foreignKeyParents'
  | 'primaryKeys'
  | 'suspendTriggers'
  | 'allowLongStatements'
  | 'planEachRun'
> = {
  lockSkipLocked: (query) => query.forUpdate().skipLocked(),
  lockForUpdate: (query) => query.forUpdate(),
  // A table lock, not an advisory one: writers already hold ROW EXCLUSIVE on a table they
  // write (from their first write to their commit), which SHARE ROW EXCLUSIVE waits for.
  lockTableWrites: async (trx: Executor, table, options = {}) => {
    const name = checkIdentifier('lockTableWrites', table);
    const { waitMs } = options;
    if (waitMs === undefined) {
      await sql`lock table ${sql.table(name)} in share row exclusive mode`.execute(trx);
      return;
    }
    await setLocalMs(trx, 'lock_timeout', Math.max(1, Math.ceil(waitMs)));
    await sql`lock table ${sql.table(name)} in share row exclusive mode`.execute(trx);
    await sql`set local lock_timeout = default`.execute(trx);
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
  foreignKeyParents: async (db) => {
    const { rows } = await sql<{ child: string; parent: string | null }>`
      select c.relname as child, p.relname as parent
      from pg_class c
      left join pg_constraint k on k.conrelid = c.oid and k.contype = 'f'
      left join pg_class p on p.oid = k.confrelid
      where c.relkind in ('r', 'p') and c.relnamespace = current_schema()::regnamespace`.execute(
      db,
    );
    const parents = new Map<string, string[]>();
    for (const { child, parent } of rows) {
      const list = parents.get(child) ?? [];
      if (parent !== null && !list.includes(parent)) list.push(parent);
      parents.set(child, list);
    }
    return parents;
  },
  primaryKeys: async (db) => {
    const { rows } = await sql<{ table: string; column: string }>`
      select c.relname as "table", a.attname as "column"
      from pg_index i
      join pg_class c on c.oid = i.indrelid
      cross join lateral unnest(i.indkey) with ordinality as k(attnum, n)
      join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
      where i.indisprimary and c.relnamespace = current_schema()::regnamespace
      order by c.relname, k.n`.execute(db);
    const keys = new Map<string, string[]>();
    for (const { table, column } of rows) keys.set(table, [...(keys.get(table) ?? []), column]);
    return keys;
  },
  // SET LOCAL: for this transaction only; the pool's connection keeps its statement_timeout.
  allowLongStatements: async (trx, ms = 0) => {
    // 0 lifts the limit; a limit already spent is 1 ms, never 0.
    await setLocalMs(trx, 'statement_timeout', ms === 0 ? 0 : Math.max(1, Math.ceil(ms)));
  },
  planEachRun: async (trx) => {
    await sql`set local plan_cache_mode = force_custom_plan`.execute(trx);
  },
  // USER: the schema's triggers, not the ones that enforce foreign keys. DDL is transactional
  // here, so a copy that fails leaves them on.
  suspendTriggers: async (trx) => {
    const { rows } = await sql<{ table: string }>`
      select distinct c.relname as table from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where not t.tgisinternal and c.relnamespace = current_schema()::regnamespace`.execute(trx);
    for (const { table } of rows) {
      await sql`alter table ${sql.table(table)} disable trigger user`.execute(trx);
    }
    return async () => {
      for (const { table } of rows) {
        await sql`alter table ${sql.table(table)} enable trigger user`.execute(trx);
      }
    };
  },
};
