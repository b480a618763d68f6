import SQLite from 'better-sqlite3';
import { sqliteNativeBinding } from '../../runtime/native-addon.js';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type QueryResult,
  type SqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
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

/**
 * A select's rows `chunkSize` at a time, as Kysely's `streamQuery` gives them: one result per
 * chunk, not one per row. A chunk is read at once (the statement steps synchronously), so a
 * stream of 100,000 rows takes 100 trips through the async steps of Kysely's stream where one
 * a row cost more than reading the rows.
 */
export function* selectInChunks<R>(
  statement: SqliteStatement,
  query: CompiledQuery,
  chunkSize: number | undefined,
): Generator<QueryResult<R>> {
  if (!SelectQueryNode.is(query.query)) {
    throw new Error('Sqlite driver only supports streaming of select queries');
  }
  const size = Math.max(1, Math.floor(chunkSize ?? 1));
  let rows: R[] = [];
  for (const row of statement.iterate(query.parameters)) {
    rows.push(row as R);
    if (rows.length === size) {
      yield { rows };
      rows = [];
    }
  }
  if (rows.length > 0) yield { rows };
}

/** Kysely's SQLite connection, but a stream gives its rows a chunk at a time. */
class ChunkedStreamConnection implements DatabaseConnection {
  constructor(private readonly sqlite: SqliteDatabase) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.sqlite.prepare(query.sql);
    if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    return {
      insertId: lastInsertRowid != null ? BigInt(lastInsertRowid) : undefined,
      numAffectedRows: changes != null ? BigInt(changes) : undefined,
      rows: [],
    };
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    yield* selectInChunks<R>(this.sqlite.prepare(query.sql), query, chunkSize);
  }
}

/** Kysely's SqliteDriver (one connection behind its mutex) with ChunkedStreamConnection. */
class ChunkedStreamSqliteDriver extends SqliteDriver {
  private readonly connection: ChunkedStreamConnection;

  constructor(sqlite: SqliteDatabase) {
    super({ database: sqlite });
    this.connection = new ChunkedStreamConnection(sqlite);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
}

/**
 * SqliteDialect over an open handle, for a reader (the pipeline's: a page of a feed at a time,
 * or a stream): its statements cached (withStatementCache), its streams a chunk at a time.
 */
export function readerSqliteDialect(sqlite: SQLite.Database): Dialect {
  const database = withStatementCache(sqlite, 32);
  const base = new SqliteDialect({ database });
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new ChunkedStreamSqliteDriver(database),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}
