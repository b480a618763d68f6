import fs from 'node:fs';
import path from 'node:path';
import { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Db, SqliteLocation, Store } from '../store.js';
import {
  immediateSqliteDialect,
  openSqlite,
  readerSqliteDialect,
  withStatementCache,
  type SqliteOptions,
} from './connection.js';

/** Options every SQLite connection of one store shares (see SqliteOptions). */
export type SqliteStoreOptions = Pick<SqliteOptions, 'nativeBinding'>;

/** The SQLite store: one read-write connection, readers on demand, data_version for changes. */
export function openSqliteStore(location: SqliteLocation, options: SqliteStoreOptions = {}): Store {
  const file = location.file;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = openSqlite(file, options);
  const db: Db = new Kysely<Database>({
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
