import { SqliteAdapter, sql, type QueryExecutorProvider } from 'kysely';
import type { DialectSql } from '../dialect.js';
import { checkIdentifier } from '../identifier.js';
import { productArrayJsonBlob, productJsonBlob } from './product-json.js';

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
  // The documented unary-plus hint: `+category` keeps SQLite off the category index.
  unindexed: (column) => sql.raw(`+${checkIdentifier('unindexed', column)}`),
  productJson: productJsonBlob,
  productArrayJson: productArrayJsonBlob,
};
