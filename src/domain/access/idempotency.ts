import { createHash } from 'node:crypto';
import type { Db } from '../../db/store.js';
import { AppError } from '../../errors.js';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A first request still unfinished after this long is taken to have died with its process. */
export const IDEMPOTENCY_ABANDONED_MS = 60 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export function fingerprintRequest(method: string, path: string, rawBody: string): string {
  return createHash('sha256').update(`${method}\n${path}\n${rawBody}`).digest('hex');
}

/**
 * Claims an idempotency key for a request. Returns the stored response when the same key
 * and body were seen within 24 hours, or undefined when the caller should handle the request
 * (and then call completeIdempotentRequest or releaseIdempotentRequest).
 */
export async function claimIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  fingerprint: string,
  now: Date = new Date(),
): Promise<StoredResponse | undefined> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('api_key_id', '=', apiKeyId)
      .where('key', '=', key)
      .executeTakeFirst();
    const age = existing ? now.getTime() - Date.parse(existing.created_at) : Infinity;
    const stale =
      age > IDEMPOTENCY_TTL_MS ||
      (existing?.status_code === null && age > IDEMPOTENCY_ABANDONED_MS);
    if (existing && !stale) {
      if (existing.fingerprint !== fingerprint) {
        throw new AppError(
          'conflict',
          'This Idempotency-Key was already used with a different request body or path.',
          { field: 'Idempotency-Key', reason: 'reused with another request' },
        );
      }
      if (existing.status_code === null) {
        throw new AppError(
          'conflict',
          'A request with this Idempotency-Key is still in progress.',
          {
            field: 'Idempotency-Key',
            reason: 'request in progress',
            retryAfter: 1,
          },
        );
      }
      return { status: existing.status_code, body: JSON.parse(existing.response_body ?? 'null') };
    }
    if (existing) {
      await trx
        .deleteFrom('idempotency_keys')
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .execute();
    }
    await trx
      .insertInto('idempotency_keys')
      .values({
        api_key_id: apiKeyId,
        key,
        fingerprint,
        status_code: null,
        response_body: null,
        created_at: now.toISOString(),
      })
      .execute();
    return undefined;
  });
}

export async function completeIdempotentRequest(
  db: Db,
  apiKeyId: string,
  key: string,
  response: StoredResponse,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ status_code: response.status, response_body: JSON.stringify(response.body ?? null) })
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .execute();
}

/** Forgets a claim whose request failed on our side, so the client can retry it. */
export async function releaseIdempotentRequest(
  db: Db,
  apiKeyId: string,
  key: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .execute();
}

export async function purgeExpiredIdempotencyKeys(db: Db, now: Date = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString();
  await db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).execute();
}
