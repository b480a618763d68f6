import type { StoreLocation, Store } from './store.js';

/**
 * Opens a store from its location, loading that dialect's driver only (better-sqlite3 or pg,
 * not both, and not the configuration's schemas that store.ts brings): for a worker thread,
 * which pays for every module it loads each time a server starts it. Same store as
 * openStoreAt.
 */
export async function openStoreOfDialect(location: StoreLocation): Promise<Store> {
  switch (location.dialect) {
    case 'sqlite':
      return (await import('./sqlite/store.js')).openSqliteStore(location);
    case 'postgres':
      return (await import('./postgres/store.js')).openPostgresStore(location);
    default:
      throw new Error(
        `store location: dialect ${JSON.stringify((location as { dialect: unknown }).dialect)} is not supported`,
      );
  }
}
