import type { Kysely } from 'kysely';
import { ConfigError, type Config } from '../config.js';
import type { Database } from './schema.js';
import { openPostgresStore, type PostgresStoreOptions } from './postgres/store.js';
import { isPostgresUrl, postgresSettings } from './postgres/settings.js';
import { unreachableStoreMessage } from './unavailable.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/store.js';

/**
 * The seam between the service and its database. Nothing outside src/db/ opens a connection
 * by path or builds a dialect: it asks a Store (or openStoreAt, in another thread) instead.
 */

export type Db = Kysely<Database>;

/** Where a SQLite store lives. */
export interface SqliteLocation {
  dialect: 'sqlite';
  /** Absolute path of the SQLite file. */
  file: string;
}

/** Where a PostgreSQL store lives: DATABASE_URL (db/postgres/settings.ts). */
export interface PostgresLocation {
  dialect: 'postgres';
  /** The whole DATABASE_URL, password and options included: never log it (describeLocation). */
  url: string;
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself, for what needs a session (LISTEN, migrations and
   * their session lock, the streaming readers' session settings). When set, `url` is taken for
   * a transaction pooler (PgBouncer): no startup parameters, no named prepared statements.
   */
  directUrl?: string;
}

/**
 * Where a store lives, as plain data: it crosses to a worker thread (structured clone), which
 * opens its own connection with openStoreAt.
 */
export type StoreLocation = SqliteLocation | PostgresLocation;

export interface Store {
  /**
   * The main connection: every write, and the reads of requests. On SQLite a read outside a
   * transaction runs on a read-only connection beside it, so it never waits for a
   * transaction under way (db/sqlite/driver.ts).
   */
  db: Db;
  location: StoreLocation;
  /**
   * A second connection, read-only, that the caller closes (`destroy()`). For streaming: a
   * stream holds its connection to the end, and SQLite's driver has one, so a query awaited
   * inside `.stream()` on the same connection would wait forever.
   */
  openReader(): Db;
  /**
   * A number that changes whenever another connection (another process: `keys revoke`,
   * `build`) commits to the store. Caches of rows this process did not write use it to know
   * when to look again. (SQLite's data_version; PostgreSQL would use LISTEN/NOTIFY.)
   */
  externalChanges(): number;
  close(): Promise<void>;
}

export type StoreOptions = SqliteStoreOptions & PostgresStoreOptions;

/** Where the configured store lives. */
export function storeLocation(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_FILE' | 'DATABASE_DIRECT_URL'>,
): StoreLocation {
  const direct = config.DATABASE_DIRECT_URL;
  if (direct && !config.DATABASE_URL) {
    throw new ConfigError(
      'DATABASE_DIRECT_URL: set only beside DATABASE_URL (the pooler it bypasses); unset it for the SQLite file in DATA_DIR',
    );
  }
  if (config.DATABASE_URL) {
    if (!isPostgresUrl(config.DATABASE_URL)) {
      throw new ConfigError(
        'DATABASE_URL: the scheme must be postgres:// or postgresql:// (unset DATABASE_URL for the SQLite file in DATA_DIR)',
      );
    }
    // Read now, so a bad URL fails at start with a message naming the option.
    try {
      postgresSettings(config.DATABASE_URL, { pooled: Boolean(direct) });
      if (direct) postgresSettings(direct, { name: 'DATABASE_DIRECT_URL' });
    } catch (err) {
      throw new ConfigError((err as Error).message, { cause: err });
    }
    return {
      dialect: 'postgres',
      url: config.DATABASE_URL,
      ...(direct ? { directUrl: direct } : {}),
    };
  }
  return { dialect: 'sqlite', file: config.DATABASE_FILE };
}

/** Opens the configured store. */
export function openStore(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_FILE' | 'DATABASE_DIRECT_URL'>,
  options: StoreOptions = {},
): Store {
  return openStoreAt(storeLocation(config), options);
}

/** Opens a store from its location: how a worker thread gets a connection of its own. */
export function openStoreAt(location: StoreLocation, options: StoreOptions = {}): Store {
  switch (location.dialect) {
    case 'sqlite':
      return openSqliteStore(location, options);
    case 'postgres':
      return openPostgresStore(location, options);
    default:
      throw new Error(
        `store location: dialect ${JSON.stringify((location as { dialect: unknown }).dialect)} is not supported`,
      );
  }
}

/**
 * The one line to print when a command could not open the store because PostgreSQL refused
 * or could not be reached (host:port from DATABASE_URL, never the password); undefined for
 * other errors.
 */
export function storeOpenFailure(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_DIRECT_URL'>,
  err: unknown,
): string | undefined {
  if (!config.DATABASE_URL || !isPostgresUrl(config.DATABASE_URL)) return undefined;
  let address: string;
  try {
    address = postgresSettings(config.DATABASE_URL, {
      pooled: Boolean(config.DATABASE_DIRECT_URL),
    }).address;
    // Sessions (migrations, first) go to DATABASE_DIRECT_URL: name both.
    if (config.DATABASE_DIRECT_URL) {
      address += ` (direct: ${postgresSettings(config.DATABASE_DIRECT_URL, { name: 'DATABASE_DIRECT_URL' }).address})`;
    }
  } catch {
    return undefined;
  }
  return unreachableStoreMessage(err, address);
}

/** A location for logs and messages (the file, or a URL without its password). */
export function describeLocation(location: StoreLocation): string {
  return location.dialect === 'sqlite' ? location.file : postgresSettings(location.url).display;
}
