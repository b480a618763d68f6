import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Database } from '../schema.js';
import type { Db, PostgresLocation, Store } from '../store.js';
import { ChangeListener } from './changes.js';
import { preparingQueries } from './driver.js';
import { postgresSettings } from './settings.js';
import { storeTypes } from './types.js';

/** What went wrong on an idle connection (PostgreSQL restarted, the network dropped). */
export type PoolErrorHandler = (error: Error) => void;

export interface PostgresStoreOptions {
  /** Told of errors on idle pooled connections (which the pool then drops and replaces). */
  onPoolError?: PoolErrorHandler;
}

/**
 * The PostgreSQL store: a pg pool (DATABASE_URL's pool_size, statement_timeout, sslmode),
 * streaming through pg-cursor, LISTEN/NOTIFY for changes made by other processes.
 */
export function openPostgresStore(
  location: PostgresLocation,
  options: PostgresStoreOptions = {},
): Store {
  const settings = postgresSettings(location.url);
  const config = { ...settings.pool, types: storeTypes };
  const pool = new pg.Pool(config);
  // An idle client's error (a server restart) is emitted on the pool; unhandled, it would
  // end the process. The pool drops that client; the next checkout opens a new one.
  pool.on('error', (error) => options.onPoolError?.(error));
  // A checked-out connection that dies between two statements emits 'error' on itself;
  // the statement in flight (or the next) fails, and the pool drops the connection on its
  // release. Without a listener the event would end the process.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    preparingQueries(client);
  });
  // No lock of our own around transactions: each read-decide-write path locks the rows its
  // decision reads (docs/postgresql.md, "What each write path locks").
  const db: Db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool, cursor: Cursor }),
  });
  let listener: ChangeListener | undefined;
  let closed = false;
  return {
    db,
    location,
    // A reader streams (a cursor holds its connection to the end) beside the main pool: a
    // pool of its own, two connections, read-only; destroy() closes it. Its transactions are
    // repeatable read: the pipeline reads a feed's pages, or the registry, in one transaction
    // to see one snapshot (as a SQLite read transaction does), which read committed would not
    // give.
    openReader: () => {
      const readerPool = new pg.Pool({
        ...config,
        max: 2,
        options:
          '-c default_transaction_read_only=on -c default_transaction_isolation=repeatable\\ read',
      });
      readerPool.on('error', (error) => options.onPoolError?.(error));
      readerPool.on('connect', (client) => client.on('error', () => {}));
      return new Kysely<Database>({
        dialect: new PostgresDialect({ pool: readerPool, cursor: Cursor }),
      });
    },
    externalChanges: () => {
      // Opened on first use: only a process that caches (serve) holds a LISTEN connection.
      if (!listener && !closed)
        listener = new ChangeListener({ ...settings.pool, types: storeTypes });
      return listener?.version() ?? -1;
    },
    close: async () => {
      closed = true;
      await listener?.close();
      await db.destroy();
    },
  };
}
