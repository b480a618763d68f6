import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import {
  completeIdempotencyClaim,
  deleteIdempotencyKeysBefore,
  insertIdempotencyClaim,
  insertIdempotencyKey,
  reclaimIdempotencyKey,
  selectIdempotencyKey,
} from '../../db/queries/idempotency.js';
import type { Db } from '../../db/store.js';
import type { Database } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { AppError } from '../../errors.js';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** One request under an Idempotency-Key. */
export interface IdempotentRequest {
  apiKeyId: string;
  /** The Idempotency-Key header. */
  key: string;
  /** fingerprintRequest of its method, path and body. */
  fingerprint: string;
  now: Date;
}

export interface IdempotentOutcome {
  response: StoredResponse;
  /** The response is the one stored for an earlier request with this key. */
  replayed: boolean;
}

export function fingerprintRequest(method: string, path: string, rawBody: string): string {
  return createHash('sha256').update(`${method}\n${path}\n${rawBody}`).digest('hex');
}

/**
 * Runs a change at most once per API key and Idempotency-Key (for 24 hours). The change and
 * its response are written in one transaction: a process that dies after the commit has
 * stored the response with the change, and a retry gets that response; one that dies before
 * it leaves nothing, and a retry makes the change. The transaction first claims the key
 * (its row, inserted or taken over, locked to the commit), so requests with the same key
 * wait for each other and the second is a replay; requests with other keys do not wait.
 *
 * When the change throws, `refusal` may turn the error into a response to keep (a request we
 * refused is refused again); it is stored on its own, as the change rolled back. An error it
 * returns nothing for (ours, or a rate limit) is thrown, and the key stays free for a retry.
 */
export async function runIdempotent(
  db: Db,
  request: IdempotentRequest,
  change: (trx: Transaction<Database>) => Promise<StoredResponse>,
  refusal: (err: unknown) => StoredResponse | undefined = () => undefined,
): Promise<IdempotentOutcome> {
  try {
    return await withTransaction(db, async (trx) => {
      const stored = await claimKey(trx, request);
      if (stored) return { response: stored, replayed: true };
      const response = await change(trx);
      await completeIdempotencyClaim(trx, request.apiKeyId, request.key, {
        status_code: response.status,
        response_body: JSON.stringify(response.body ?? null),
      });
      return { response, replayed: false };
    });
  } catch (err) {
    const response = refusal(err);
    if (!response) throw err;
    await storeResponse(db, request, response);
    return { response, replayed: false };
  }
}

/** Claims tried before giving up: each failed try means the record was removed meanwhile. */
const CLAIM_TRIES = 5;

/**
 * Claims the key for this request in `trx`, or returns the response kept for it. A record
 * past its 24 hours, or a claim without a response left by an earlier version that died, is
 * taken over as this request's claim.
 */
async function claimKey(
  trx: Executor,
  request: IdempotentRequest,
): Promise<StoredResponse | undefined> {
  const claim = {
    api_key_id: request.apiKeyId,
    key: request.key,
    fingerprint: request.fingerprint,
    status_code: null,
    response_body: null,
    created_at: request.now.toISOString(),
  };
  for (let i = 0; i < CLAIM_TRIES; i++) {
    if (await insertIdempotencyClaim(trx, claim)) return undefined;
    // Committed by now (the insert waited for its holder); locked, so it stays as read.
    const existing = await selectIdempotencyKey(trx, request.apiKeyId, request.key, true);
    if (!existing) continue;
    const age = request.now.getTime() - Date.parse(existing.created_at);
    if (age > IDEMPOTENCY_TTL_MS || existing.status_code === null) {
      await reclaimIdempotencyKey(trx, claim);
      return undefined;
    }
    if (existing.fingerprint !== request.fingerprint) {
      throw new AppError(
        'conflict',
        'This Idempotency-Key was already used with a different request body or path.',
        { field: 'Idempotency-Key', reason: 'reused with another request' },
      );
    }
    return { status: existing.status_code, body: JSON.parse(existing.response_body ?? 'null') };
  }
  throw new Error(`Idempotency-Key: the key's record kept disappearing (${CLAIM_TRIES} claims)`);
}

async function storeResponse(
  db: Executor,
  request: IdempotentRequest,
  response: StoredResponse,
): Promise<void> {
  // A refusal stored after its rollback may meet a response stored meanwhile: keep that one.
  await insertIdempotencyKey(db, {
    api_key_id: request.apiKeyId,
    key: request.key,
    fingerprint: request.fingerprint,
    status_code: response.status,
    response_body: JSON.stringify(response.body ?? null),
    created_at: request.now.toISOString(),
  });
}

export async function purgeExpiredIdempotencyKeys(db: Db, now: Date = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString();
  await deleteIdempotencyKeysBefore(db, cutoff);
}
