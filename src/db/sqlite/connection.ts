import SQLite from 'better-sqlite3';
import { sqliteNativeBinding } from '../../runtime/native-addon.js';
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';

export interface SqliteOptions {
  readonly?: boolean;
  /** Page cache in KiB (default 32,000); a connection that only scans needs little. */
  cacheKiB?: number;
  /**
   * better-sqlite3's native addon: a path, or the loaded addon. Default: the one the one-file
   * binary carries (src/runtime/native-addon.ts), or better-sqlite3's own lookup from source.
   */
  nativeBinding?: string | object;
}

/**
 * A raw better-sqlite3 handle with the store's pragmas: WAL (readers never wait for the
 * writer, and a `build` can read while `serve` writes), foreign keys, and a busy timeout so a
 * second process waits for the write lock instead of failing.
 * SQLite-only settings live here and nowhere else.
 */
export function openSqlite(file: string, options: SqliteOptions = {}): SQLite.Database {
  const sqlite = new SQLite(file, {
    readonly: options.readonly ?? false,
    // The types say string; better-sqlite3 also takes the loaded addon (what a binary carries).
    nativeBinding: (options.nativeBinding ?? sqliteNativeBinding()) as string | undefined,
  });
  // The busy timeout first: the pragmas after it may need a lock another process holds.
  sqlite.pragma('busy_timeout = 10000');
  if (!options.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`cache_size = -${Math.floor(options.cacheKiB ?? 32_000)}`);
  return sqlite;
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a
 * primary-key read. This keeps the most recent statements by SQL text. Kysely runs one query
 * at a time per connection (a stream holds the connection to its end), so a cached statement
 * is never run twice at once.
 */
export function withStatementCache(sqlite: SQLite.Database, max = 256): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt) {
        // Refresh its place so the least recently used goes first.
        cache.delete(sql);
      } else {
        stmt = sqlite.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
    close() {
      cache.clear();
      sqlite.close();
    },
  };
}

/**
 * Transactions that take the write lock when they begin. SQLite's default (deferred) begins
 * as a reader; when another process (`build` beside `serve`, a CLI) commits a write between
 * our first read and our first write, that write fails at once with SQLITE_BUSY_SNAPSHOT,
 * and the busy timeout cannot help. BEGIN IMMEDIATE waits for the lock up front instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** SqliteDialect with ImmediateSqliteDriver (its config is private, so by composition). */
export function immediateSqliteDialect(config: SqliteDialectConfig): Dialect {
  const base = new SqliteDialect(config);
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new ImmediateSqliteDriver(config),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}

/** A plain SqliteDialect over an open handle (for read-only connections: no transactions). */
export function readerSqliteDialect(sqlite: SQLite.Database): Dialect {
  return new SqliteDialect({ database: sqlite });
}
