import fs from 'node:fs';
import path from 'node:path';
import { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Db, SqliteLocation, Store } from '../store.js';
import { splitSqliteDialect } from './driver.js';
import {
  immediateSqliteDialect,
  openSqlite,
  readerSqliteDialect,
  withStatementCache,
  type SqliteOptions,
} from './connection.js';

/** Options every SQLite connection of one store shares (see SqliteOptions). */
export type SqliteStoreOptions = Pick<SqliteOptions, 'nativeBinding'>;

/**
 * The SQLite store: one read-write connection with a read-only one beside it for the reads
 * outside a transaction (driver.ts: they never wait for a transaction under way), readers on
 * demand for streams, data_version for changes. An in-memory store has its one connection.
 */
export function openSqliteStore(location: SqliteLocation, options: SqliteStoreOptions = {}): Store {
  const file = location.file;
  const inMemory = file === ':memory:' || file === '';
  if (!inMemory) fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = openSqlite(file, options);
  const db: Db = new Kysely<Database>({
    dialect: inMemory
      ? immediateSqliteDialect({ database: withStatementCache(sqlite) })
      : splitSqliteDialect(
          withStatementCache(sqlite),
          withStatementCache(openSqlite(file, { ...options, readonly: true })),
        ),
  });
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  // Reading data_version takes a WAL read lock (two fcntl calls): ask at most once a
  // millisecond. Another process's commit is seen within 1 ms, well before any client could
  // have heard of it.
  let checkedAt = -1;
  let version = 0;
  return {
    db,
    location,
    openReader: () =>
      new Kysely<Database>({
        // A reader scans (the catalogue once per feed): the OS page cache serves that, and a
        // 32 MB SQLite cache would only add to a run's peak memory.
        dialect: readerSqliteDialect(
          openSqlite(file, { ...options, readonly: true, cacheKiB: 4_000 }),
        ),
      }),
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
