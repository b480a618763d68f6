import type { IdempotencyKeyRow, NewIdempotencyKeyRow } from '../schema.js';
import type { Db } from '../store.js';

/** The record kept for a key of one API key, if any. */
export function selectIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function deleteIdempotencyKey(db: Db, apiKeyId: string, key: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .execute();
}

/** Stores a response; a record already there for the key wins (it is kept, not replaced). */
export async function insertIdempotencyKey(db: Db, row: NewIdempotencyKeyRow): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function deleteIdempotencyKeysBefore(db: Db, cutoff: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).execute();
}
