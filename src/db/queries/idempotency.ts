import { dialectOf } from '../dialect.js';
import type { IdempotencyKeyRow, NewIdempotencyKeyRow } from '../schema.js';
import type { Db } from '../store.js';

/**
 * The record kept for a key of one API key, if any; with `lock`, locked to the end of the
 * transaction (FOR UPDATE on PostgreSQL: it waits for a transaction that holds the record).
 */
export function selectIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  lock = false,
): Promise<IdempotencyKeyRow | undefined> {
  const query = db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key);
  return (lock ? dialectOf(db).lockForUpdate(query) : query).executeTakeFirst();
}

/**
 * Inserts a claim (a record without a response) unless the key has a record: whether it was
 * inserted. The primary key decides: of requests racing with one key, one inserts and holds
 * the row to its commit; the others wait for that commit and find its record.
 */
export async function insertIdempotencyClaim(
  db: Db,
  row: NewIdempotencyKeyRow & { status_code: null; response_body: null },
): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning('key')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Makes an existing record (locked by the caller) a fresh claim for another request. */
export async function reclaimIdempotencyKey(
  db: Db,
  row: NewIdempotencyKeyRow & { status_code: null; response_body: null },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      fingerprint: row.fingerprint,
      status_code: null,
      response_body: null,
      created_at: row.created_at,
    })
    .where('api_key_id', '=', row.api_key_id)
    .where('key', '=', row.key)
    .execute();
}

/** Stores the response of a claim this transaction holds. */
export async function completeIdempotencyClaim(
  db: Db,
  apiKeyId: string,
  key: string,
  response: { status_code: number; response_body: string },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set(response)
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
