import type { QueryExecutorProvider, RawBuilder } from 'kysely';
import { isPostgres, postgresSql } from './postgres/dialect-sql.js';
import { isSqlite, sqliteSql } from './sqlite/dialect-sql.js';

/**
 * The SQL that differs between the databases the store can run on, behind one interface:
 * queries ask `dialectOf(db)` instead of writing SQLite's functions in place, so a PostgreSQL
 * store fills this in (db/postgres/dialect-sql.ts) and the queries stay as they are.
 * Migrations branch on the dialect where their SQL must differ (db/migrations/dialect.ts).
 */
export interface DialectSql {
  name: 'sqlite' | 'postgres';
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
  /**
   * The column, written so the planner does not pick an index on it (SQLite's unary plus;
   * PostgreSQL's planner costs its choices itself, so the column as it is).
   */
  unindexed(column: string): RawBuilder<unknown>;
  /**
   * One product row (the `products` columns in scope) as its API JSON: UTF-8 bytes (SQLite)
   * or text (PostgreSQL, whose bytea travels hex-encoded at twice the size).
   */
  productJson: RawBuilder<Buffer | string>;
  /**
   * The rows in scope as a JSON array of their API JSON, by creation time, then id, as
   * productJson gives it (an aggregate: `[]` for no rows).
   */
  productArrayJson: RawBuilder<Buffer | string>;
}

/** The dialect SQL of the database a Kysely instance (or transaction) talks to. */
export function dialectOf(db: QueryExecutorProvider): DialectSql {
  if (isSqlite(db)) return sqliteSql;
  if (isPostgres(db)) return postgresSql;
  const adapter = db.getExecutor().adapter.constructor.name;
  throw new Error(`dialectOf: no DialectSql for the database behind adapter ${adapter}`);
}
