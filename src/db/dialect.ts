import type { QueryExecutorProvider, RawBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { Executor } from './transaction.js';
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
   * The least of the values (SQLite's many-argument `min`, PostgreSQL's `least`). For values
   * that are never null: on a null the two differ (SQLite answers null, PostgreSQL skips it).
   */
  least(...values: RawBuilder<number>[]): RawBuilder<number>;

  // --- Several processes on one store (issue 14, branch pgmulti) ---

  /**
   * A select that locks the rows it returns, skipping rows another transaction holds
   * (PostgreSQL `FOR UPDATE SKIP LOCKED`). SQLite has one writer at a time, so a write
   * transaction already holds everything: the query is returned as it is.
   */
  lockSkipLocked<DB, TB extends keyof DB, O>(
    query: SelectQueryBuilder<DB, TB, O>,
  ): SelectQueryBuilder<DB, TB, O>;
  /**
   * A select that locks the rows it returns until the transaction ends (PostgreSQL
   * `FOR UPDATE`): a read-decide-write path reads the rows its decision rests on with it, so
   * no other transaction changes them before the write. SQLite: returned as it is (one
   * writer at a time already holds everything).
   */
  lockForUpdate<DB, TB extends keyof DB, O>(
    query: SelectQueryBuilder<DB, TB, O>,
  ): SelectQueryBuilder<DB, TB, O>;
  /**
   * Called first in a transaction whose decision spans a whole table (a count against its
   * limit, the outbox's next events): waits for the transactions writing the table to end
   * and keeps new writes out until this one ends (PostgreSQL `LOCK TABLE ... IN SHARE ROW
   * EXCLUSIVE MODE`, which two callers also take in turn; reads go on). SQLite: nothing.
   * With `waitMs`, waits that long at most (PostgreSQL `lock_timeout`): past it the statement
   * fails (isLockUnavailable) and its transaction with it, for a caller that would rather come
   * back later than hold up the writers queued behind its request.
   */
  lockTableWrites(
    trx: Executor,
    table: 'events' | 'webhooks' | 'integrations' | 'products',
    options?: { waitMs?: number },
  ): Promise<void>;
  /**
   * After rows were copied in with explicit ids (`store copy`): the table's generated-id
   * sequence continues after the largest id. SQLite's AUTOINCREMENT already does.
   */
  continueSequences(db: QueryExecutorProvider, table: string): Promise<void>;
  /**
   * For each table, the tables its foreign keys reference (`store copy` writes parents
   * before children).
   */
  foreignKeyParents(db: QueryExecutorProvider): Promise<Map<string, string[]>>;
  /** For each table, the columns of its primary key, in key order (`store copy` names a row by them). */
  primaryKeys(db: QueryExecutorProvider): Promise<Map<string, string[]>>;
  /**
   * Turns the schema's own triggers off in a transaction (`store copy` writes every table as
   * it is, counters included, so a trigger must not count the rows a second time) and returns
   * what turns them back on, to call before the commit.
   */
  suspendTriggers(trx: QueryExecutorProvider): Promise<() => Promise<void>>;
  /**
   * Lifts the statement timeout for the rest of a transaction (`store copy` streams a whole
   * table through one statement), or sets it to `ms`, at least 1 (a sync's apply, which may
   * wait for another's catalogue lock, bounded by its own deadline). SQLite has none.
   */
  allowLongStatements(trx: QueryExecutorProvider, ms?: number): Promise<void>;
  /**
   * Plans each statement of the rest of a transaction for its own values and the tables as
   * they are, never from a plan cached for the prepared statement (PostgreSQL's
   * `plan_cache_mode = force_custom_plan`): for a bulk write whose tables grow within it (a
   * sync's apply of a fresh catalogue), where a generic plan made while they were small scans
   * them whole at every batch. SQLite plans each run already.
   */
  planEachRun(trx: QueryExecutorProvider): Promise<void>;
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
   * One product row as its API JSON text, for a page: the query layer joins a page's rows into
   * its array. An aggregate in SQL sorts the rows' whole texts again (SQLite's group_concat
   * with order by cost 40% more than reading them one by one, docs/benchmarks.md; PostgreSQL's
   * string_agg, 3.6 ms of the database's CPU a page of 250 against 1.3 ms for the rows).
   */
  productPageJson: RawBuilder<string>;

  // --- Full-text search of active products (issue 23, migration 20261127060000) ---

  /**
   * The (brand, variant group) of the active products matching the words (each of them, or
   * any) and `filter` (over the products' columns; undefined: every active product), best
   * match first, then by group key and brand: one row a group, with its best product's score.
   */
  searchGroups(
    words: SearchWords,
    filter: RawBuilder<SqlBool> | undefined,
    page: SearchPage,
  ): RawBuilder<SearchGroupRow>;
  /**
   * Tables the store derives from others (SQLite's full-text index and its shadow tables):
   * `store copy` leaves them out and fills them again (rebuildDerived) from the copied rows.
   */
  isDerivedTable(name: string): boolean;
  /**
   * Columns the store computes itself (PostgreSQL's generated `products.search_vector`): a
   * copy neither reads nor writes them, and the target computes its own.
   */
  isDerivedColumn(table: string, column: string): boolean;
  /** Fills the derived tables from the tables they follow. */
  rebuildDerived(db: QueryExecutorProvider): Promise<void>;
}

/** What a search looks for: plain words of letters and digits, each of them or any. */
export interface SearchWords {
  terms: readonly string[];
  match: 'every' | 'any';
}

/** A page of search results. */
export interface SearchPage {
  limit: number;
  offset: number;
  /**
   * Rank among this many best-matching products at most (a query of common words matches
   * most of a catalogue; grouping all of them costs a read of each); unset: every match.
   */
  maxHits?: number | undefined;
}

/** One variant group found by a search: its brand, its key (item_group_id, else id), its score. */
export interface SearchGroupRow {
  brand: string | null;
  group_key: string | number;
  /** Higher is better; comparable within one search only. */
  score: number;
}

/** The dialect SQL of the database a Kysely instance (or transaction) talks to. */
export function dialectOf(db: QueryExecutorProvider): DialectSql {
  if (isSqlite(db)) return sqliteSql;
  if (isPostgres(db)) return postgresSql;
  const adapter = db.getExecutor().adapter.constructor.name;
  throw new Error(`dialectOf: no DialectSql for the database behind adapter ${adapter}`);
}
