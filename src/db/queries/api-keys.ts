import { dialectOf } from '../dialect.js';
import { preparedQuery } from '../prepared.js';
import type { ApiKeyRow } from '../schema.js';
import type { Db } from '../store.js';

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** Every key, oldest first. */
export function selectApiKeys(db: Db): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countActiveApiKeys(db: Db): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The row by id; with `lock`, locked to the end of the transaction (FOR UPDATE on
 * PostgreSQL) for a read-decide-write path that decides on it.
 */
export function selectApiKey(db: Db, id: string, lock = false): Promise<ApiKeyRow | undefined> {
  const query = db.selectFrom('api_keys').selectAll().where('id', '=', id);
  return (lock ? dialectOf(db).lockForUpdate(query) : query).executeTakeFirst();
}

/** The key whose secret hashes to `hash` (compiled once: it runs on every request). */
export const selectApiKeyByHash = preparedQuery((db: Db, hash: string) =>
  db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash),
);

export async function setApiKeyRevokedAt(db: Db, id: string, revokedAt: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('id', '=', id).execute();
}

export async function setApiKeyLastUsedAt(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
