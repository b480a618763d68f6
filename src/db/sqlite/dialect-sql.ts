import { SqliteAdapter, sql, type QueryExecutorProvider } from 'kysely';
import type { DialectSql } from '../dialect.js';
import { checkIdentifier } from '../identifier.js';
import { productJsonBlob, productJsonString } from './product-json.js';
import { isSqliteSearchTable, rebuildSqliteSearch, sqliteSearchGroups } from './product-search.js';

/** Whether a Kysely instance (or transaction) talks to SQLite. */
export function isSqlite(db: QueryExecutorProvider): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** SQLite's side of DialectSql. */
export const sqliteSql: DialectSql = {
  name: 'sqlite',
  // SQLITE_MAX_VARIABLE_NUMBER since SQLite 3.32 (better-sqlite3 bundles a later one).
  maxBindParameters: 32_766,
  dayOf: (column) => sql.raw<string>(`substr(${checkIdentifier('dayOf', column)}, 1, 10)`),
  // The path is written in the SQL text, not bound: SQLite uses an index on an expression
  // only when the query's expression is the same text (products_discovery's group key).
  jsonMember: (column, key) =>
    sql.raw<string | null>(
      `json_extract(${checkIdentifier('jsonMember', column)}, '$.${checkIdentifier('jsonMember', key)}')`,
    ),
  least: (...values) => sql<number>`min(${sql.join(values)})`,

  // --- Several processes on one store (issue 14, branch pgmulti) ---
  // One writer at a time: a write transaction already excludes every other.
  lockSkipLocked: (query) => query,
  lockForUpdate: (query) => query,
  lockTableWrites: async () => {},
  continueSequences: async () => {},
  foreignKeyParents: async (db) => {
    const { rows: tables } = await sql<{ name: string }>`
      select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
    const parents = new Map<string, string[]>();
    for (const { name } of tables) {
      const { rows } = await sql<{
        table: string;
      }>`select "table" from pragma_foreign_key_list(${name})`.execute(db);
      parents.set(name, [...new Set(rows.map((r) => r.table))]);
    }
    return parents;
  },
  primaryKeys: async (db) => {
    const { rows } = await sql<{ table: string; column: string }>`
      select m.name as "table", p.name as "column" from sqlite_master m, pragma_table_info(m.name) p
      where m.type = 'table' and m.name not like 'sqlite_%' and p.pk > 0
      order by m.name, p.pk`.execute(db);
    const keys = new Map<string, string[]>();
    for (const { table, column } of rows) keys.set(table, [...(keys.get(table) ?? []), column]);
    return keys;
  },
  allowLongStatements: async () => {},
  planEachRun: async () => {},
  // SQLite cannot switch a trigger off: drop them and create them again, in the transaction.
  suspendTriggers: async (trx) => {
    const { rows } = await sql<{ name: string; sql: string }>`
      select name, sql from sqlite_master where type = 'trigger' order by name`.execute(trx);
    for (const { name } of rows) await sql`drop trigger ${sql.id(name)}`.execute(trx);
    return async () => {
      for (const trigger of rows) await sql.raw(trigger.sql).execute(trx);
    };
  },
  // The documented unary-plus hint: `+category` keeps SQLite off the category index.
  unindexed: (column) => sql.raw(`+${checkIdentifier('unindexed', column)}`),
  productJson: productJsonBlob,
  productPageJson: productJsonString,
  searchGroups: sqliteSearchGroups,
  isDerivedTable: isSqliteSearchTable,
  isDerivedColumn: () => false,
  rebuildDerived: rebuildSqliteSearch,
};
