import {
  CompiledQuery,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteDialect,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import { selectInChunks } from './connection.js';

/**
 * The store's SQLite dialect: one read-write connection and, beside it, a read-only one.
 *
 * Kysely's own SQLite driver has one connection behind a mutex, and a transaction holds that
 * mutex to its end, so every API read waited behind a sync's final apply (19 s for 30,000
 * items). Here a query outside any transaction that only reads (a `select`, built or raw)
 * runs at once on the reader; in WAL mode it sees the last commit, never a transaction under
 * way, so an apply stays all-or-nothing to readers. Everything else takes the mutex and runs
 * on the writer: writes, every query of a transaction (its reads see its own writes), and
 * streams (a better-sqlite3 connection that iterates can run nothing else). A connection
 * that has taken the mutex keeps it until Kysely releases it (`db.connection()` stays one
 * connection).
 */
export function splitSqliteDialect(writer: SqliteDatabase, reader: SqliteDatabase): Dialect {
  const base = new SqliteDialect({ database: writer });
  return {
    createAdapter: () => new SplitSqliteAdapter(),
    createDriver: () => new SplitSqliteDriver(writer, reader),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}

/** SQLite's adapter, but the driver handles connections itself (no mutex around each). */
class SplitSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** One waiter at a time holds it; the others wait in turn. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Waits for the mutex; resolves with the function that releases it. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return turn;
  }
}

/** A raw `select` (or `with … select`) that SQLite itself says writes nothing. */
const RAW_READ = /^\s*(select|with)\b/i;

class SplitSqliteDriver implements Driver {
  private readonly mutex = new Mutex();

  constructor(
    private readonly writer: SqliteDatabase,
    private readonly reader: SqliteDatabase,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SplitConnection(this.mutex, this.writer, this.reader);
  }

  /** BEGIN IMMEDIATE: the write lock up front (see immediateSqliteDialect). */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as SplitConnection).hold();
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoted(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${quoted(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release ${quoted(name)}`));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as SplitConnection).letGo();
  }

  async destroy(): Promise<void> {
    this.reader.close();
    this.writer.close();
  }
}

class SplitConnection implements DatabaseConnection {
  /** Releases the writer's mutex, while this connection holds it. */
  private release: (() => void) | null = null;

  constructor(
    private readonly mutex: Mutex,
    private readonly writer: SqliteDatabase,
    private readonly reader: SqliteDatabase,
  ) {}

  /** Takes the writer for this connection until Kysely releases it. */
  async hold(): Promise<void> {
    this.release ??= await this.mutex.lock();
  }

  letGo(): void {
    const release = this.release;
    this.release = null;
    release?.();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.release === null) {
      const read = this.readerStatement(query);
      if (read) return { rows: read.all(query.parameters) as R[] };
      await this.hold();
    }
    return run<R>(this.writer.prepare(query.sql), query.parameters);
  }

  /** The reader's statement for a query that only reads, else undefined. */
  private readerStatement(query: CompiledQuery): SqliteStatement | undefined {
    if (SelectQueryNode.is(query.query)) return this.reader.prepare(query.sql);
    if (!RawNode.is(query.query) || !RAW_READ.test(query.sql)) return undefined;
    const statement = this.reader.prepare(query.sql);
    // better-sqlite3's `readonly`: SQLite's own word that the statement writes nothing.
    const writesNothing = (statement as unknown as { readonly: boolean }).readonly;
    return statement.reader && writesNothing ? statement : undefined;
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) {
      throw new Error('Sqlite driver only supports streaming of select queries');
    }
    await this.hold();
    // A chunk of rows a result (connection.ts): one trip through Kysely's async steps each.
    yield* selectInChunks<R>(this.writer.prepare(query.sql), query, chunkSize);
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

function run<R>(statement: SqliteStatement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return {
    insertId: lastInsertRowid != null ? BigInt(lastInsertRowid) : undefined,
    numAffectedRows: changes != null ? BigInt(changes) : undefined,
    rows: [],
  };
}
