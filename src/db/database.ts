import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import type { Config } from '../config.js';
import { sqliteNativeBinding } from '../runtime/native-addon.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface Store {
  db: Db;
  /** Absolute path of the SQLite file. */
  file: string;
  /**
   * A number that changes whenever another connection (another process: `keys revoke`,
   * `build`) commits to the store. Caches of rows this process did not write use it to know
   * when to look again. (SQLite's data_version; PostgreSQL would use LISTEN/NOTIFY.)
   */
  externalChanges(): number;
  close(): Promise<void>;
}

/**
 * Opens the SQLite store with the pragmas the service relies on: WAL (readers never wait for
 * the writer, and a `build` can read while `serve` writes), foreign keys, and a busy timeout
 * so a second process waits for the write lock instead of failing.
 * SQLite-only settings live here and nowhere else.
 */
export function openStore(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_FILE'>): Store {
  if (config.DATABASE_URL) {
    throw new Error(
      'DATABASE_URL is set, but this build of agentshelf supports the embedded SQLite store only; unset DATABASE_URL to use DATA_DIR.',
    );
  }
  const file = config.DATABASE_FILE;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = openSqlite(file);
  const db = new Kysely<Database>({
    dialect: immediateSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  // Reading data_version takes a WAL read lock (two fcntl calls): ask at most once a
  // millisecond. Another process's commit is seen within 1 ms, well before any client could
  // have heard of it.
  let checkedAt = -1;
  let version = 0;
  return {
    db,
    file,
    externalChanges: () => {
      const now = Math.floor(performance.now());
      if (now !== checkedAt) {
        checkedAt = now;
        version = dataVersion.get() as number;
      }
      return version;
    },
    close: async () => {
      await db.destroy();
    },
  };
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

/** A raw better-sqlite3 handle with the store's pragmas (for a second, read-only connection). */
export function openSqlite(
  file: string,
  options: {
    readonly?: boolean;
    /** Page cache in KiB (default 32,000); a connection that only scans needs little. */
    cacheKiB?: number;
  } = {},
): SQLite.Database {
  const sqlite = new SQLite(file, {
    readonly: options.readonly ?? false,
    // The addon carried by the one-file binary (undefined from source). The types say string.
    nativeBinding: sqliteNativeBinding() as string | undefined,
  });
  if (!options.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma(`cache_size = -${Math.floor(options.cacheKiB ?? 32_000)}`);
  return sqlite;
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
function immediateSqliteDialect(config: SqliteDialectConfig): Dialect {
  const base = new SqliteDialect(config);
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new ImmediateSqliteDriver(config),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}
