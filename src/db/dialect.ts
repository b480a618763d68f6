import type { QueryExecutorProvider, RawBuilder } from 'kysely';
import { isSqlite, sqliteSql } from './sqlite/dialect-sql.js';

/**
 * The SQL that differs between the databases the store can run on, behind one interface:
 * queries ask `dialectOf(db)` instead of writing SQLite's functions in place, so a PostgreSQL
 * store fills this in (db/postgres/dialect-sql.ts) and the queries stay as they are.
 * Migrations are frozen history and keep their SQLite triggers; the SQLite JSON fast path of
 * the product list (queries/products.ts) is SQLite's own by design.
 */
export interface DialectSql {
  name: 'sqlite';
  /** Bound parameters one statement may carry (SQLite 32,766; PostgreSQL 65,535). */
  maxBindParameters: number;
  /**
   * The UTC day (`YYYY-MM-DD`) of a timestamp column. Timestamps are stored as fixed-length
   * ISO-8601 UTC text (`YYYY-MM-DDTHH:MM:SS.sssZ`, see db/timestamps.ts), so the day is its
   * first ten characters in either database.
   */
  dayOf(column: string): RawBuilder<string>;
  /** The member `key` of a JSON object stored in `column`, as SQL text (null when absent). */
  jsonMember(column: string, key: string): RawBuilder<string | null>;
}

/** The dialect SQL of the database a Kysely instance (or transaction) talks to. */
export function dialectOf(db: QueryExecutorProvider): DialectSql {
  if (isSqlite(db)) return sqliteSql;
  const adapter = db.getExecutor().adapter.constructor.name;
  throw new Error(`dialectOf: no DialectSql for the database behind adapter ${adapter}`);
}
