import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Database } from '../schema.js';
import type { Db, PostgresLocation, Store } from '../store.js';
import { NEEDS_DIRECT_URL, POOLER_CODE } from '../unavailable.js';
import { ChangeListener } from './changes.js';
import { preparingQueries } from './driver.js';
import { postgresSettings } from './settings.js';
import { storeTypes } from './types.js';

/** A connection that keeps its session (for migrations), released by the caller. */
export interface Session {
  db: Db;
  release(): Promise<void>;
}

const sessions = new WeakMap<Db, () => Promise<Session>>();

/**
 * A session for what needs one (migrations: Kysely's migration lock is a session-level
 * advisory lock): the store's own connection to PostgreSQL, or DATABASE_DIRECT_URL's when
 * DATABASE_URL is a transaction pooler. Undefined for a store that is not PostgreSQL's.
 */
export function sessionOf(db: Db): Promise<Session> | undefined {
  return sessions.get(db)?.();
}

/**
 * Refuses a session whose startup parameters did not arrive: a pooler told to drop them
 * (PgBouncer's ignore_startup_parameters) would also mix our sessions between clients.
 */
async function startupParametersArrived(
  db: Db,
  timeout: number | false | undefined,
): Promise<void> {
  if (!timeout) return; // 0: not sent (pg sends none), so nothing to compare.
  const { rows } = await sql<{
    setting: string;
  }>`select setting from pg_settings where name = 'statement_timeout'`.execute(db);
  if (rows[0]?.setting === String(timeout)) return;
  throw Object.assign(
    new Error(
      `statement_timeout=${timeout} of DATABASE_URL did not reach the session (it has ${rows[0]?.setting ?? 'none'}): DATABASE_URL leads to a pooler that drops startup parameters (PgBouncer's ignore_startup_parameters); ${NEEDS_DIRECT_URL}`,
    ),
    { code: POOLER_CODE },
  );
}

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
  // DATABASE_DIRECT_URL set: DATABASE_URL is a transaction pooler (PgBouncer), whose server
  // connections change between transactions. Everything that needs a session goes direct.
  const pooled = location.directUrl !== undefined;
  const settings = postgresSettings(location.url, { pooled });
  const config = { ...settings.pool, types: storeTypes };
  const sessionConfig = location.directUrl
    ? {
        ...postgresSettings(location.directUrl, { name: 'DATABASE_DIRECT_URL' }).pool,
        types: storeTypes,
      }
    : config;
  const pool = new pg.Pool(config);
  // An idle client's error (a server restart) is emitted on the pool; unhandled, it would
  // end the process. The pool drops that client; the next checkout opens a new one.
  pool.on('error', (error) => options.onPoolError?.(error));
  // A checked-out connection that dies between two statements emits 'error' on itself;
  // the statement in flight (or the next) fails, and the pool drops the connection on its
  // release. Without a listener the event would end the process.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    // A named prepared statement lives in one server session: behind a transaction pooler
    // (PgBouncer before 1.21 has no support for them) every statement runs unnamed.
    if (!pooled) preparingQueries(client);
  });
  // No lock of our own around transactions: each read-decide-write path locks the rows its
  // decision reads (docs/postgresql.md, "What each write path locks").
  const db: Db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool, cursor: Cursor }),
  });
  let listener: ChangeListener | undefined;
  let closed = false;
  sessions.set(db, async () => {
    if (!pooled) {
      await startupParametersArrived(db, settings.pool.statement_timeout);
      return { db, release: async () => {} };
    }
    const direct = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ ...sessionConfig, max: 1 }) }),
    });
    return { db: direct, release: () => direct.destroy() };
  });
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
        ...sessionConfig,
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
      if (!listener && !closed) listener = new ChangeListener(sessionConfig);
      return listener?.version() ?? -1;
    },
    close: async () => {
      closed = true;
      await listener?.close();
      await db.destroy();
    },
  };
}
