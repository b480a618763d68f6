import { hash } from 'node:crypto';
import { z } from 'zod';
import type { Environment } from '../../config.js';
import { PLAN_NAMES } from '../../config.js';
import {
  countActiveApiKeys,
  insertApiKey,
  selectApiKey,
  selectApiKeyByHash,
  selectApiKeys,
  setApiKeyLastUsedAt,
  setApiKeyRevokedAt,
} from '../../db/queries/api-keys.js';
import type { Db } from '../../db/store.js';
import type { ApiKeyRow, KeyLevel } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { text } from '../fields.js';
import { KeyLimitsView, limitsOfKey, presentKeyLimits } from './plans.js';

export const KEY_LEVELS = ['read_only', 'read_write', 'admin'] as const;

export const KEY_PREFIXES: Record<Environment, string> = {
  production: 'ask_live_',
  sandbox: 'ask_test_',
  staging: 'ask_stg_',
};

export const ApiKeyCreate = z.strictObject({
  level: z.enum(KEY_LEVELS),
  name: text(100, { min: 1 }).optional(),
  plan: z.enum(PLAN_NAMES).optional(),
  rpm: z.int().min(1).max(10_000_000).optional(),
  burst: z.int().min(6).max(20_000_000).optional(),
  monthly: z.int().min(1).max(1_000_000_000_000).optional(),
});
export type ApiKeyCreateInput = z.infer<typeof ApiKeyCreate>;

export const ApiKey = z.object({
  id: z.string(),
  name: z.string().nullable(),
  level: z.enum(KEY_LEVELS),
  environment: z.string(),
  prefix: z.string(),
  last4: z.string(),
  plan: z.string(),
  rpm: z.int().nullable(),
  burst: z.int().nullable(),
  monthly: z.int().nullable(),
  limits: KeyLimitsView,
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;

export function hashKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function presentApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    level: row.level,
    environment: row.environment,
    prefix: row.key_prefix,
    last4: row.last4,
    plan: row.plan,
    rpm: row.rpm,
    burst: row.burst,
    monthly: row.monthly,
    limits: presentKeyLimits(limitsOfKey(row)),
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

/**
 * Creates a key for an environment. The secret is returned here and nowhere else:
 * only its SHA-256 is stored.
 */
export async function createApiKey(
  db: Executor,
  input: ApiKeyCreateInput,
  options: { environment: Environment; defaultPlan: string; now?: Date },
): Promise<{ key: ApiKey; secret: string }> {
  const prefix = KEY_PREFIXES[options.environment];
  const secret = `${prefix}${randomBase62(40)}`;
  const row: ApiKeyRow = {
    id: newId('key'),
    name: input.name ?? null,
    level: input.level,
    environment: options.environment,
    key_hash: hashKey(secret),
    key_prefix: prefix,
    last4: secret.slice(-4),
    plan: input.plan ?? options.defaultPlan,
    rpm: input.rpm ?? null,
    burst: input.burst ?? null,
    monthly: input.monthly ?? null,
    created_at: (options.now ?? new Date()).toISOString(),
    last_used_at: null,
    revoked_at: null,
  };
  await insertApiKey(db, row);
  return { key: presentApiKey(row), secret };
}

export async function listApiKeys(db: Db): Promise<ApiKey[]> {
  return (await selectApiKeys(db)).map(presentApiKey);
}

export { countActiveApiKeys };

/** Revokes a key at once: the very next request with it is refused. Revoking twice is a no-op. */
export async function revokeApiKey(
  db: Executor,
  id: string,
  now: Date = new Date(),
): Promise<ApiKey> {
  return withTransaction(db, async (trx) => {
    const row = await selectApiKey(trx, id, true);
    if (!row) throw notFound('API key', id);
    if (row.revoked_at) return presentApiKey(row);
    const revoked_at = now.toISOString();
    await setApiKeyRevokedAt(trx, id, revoked_at);
    return presentApiKey({ ...row, revoked_at });
  });
}

/**
 * A 401 for a key the store knows (revoked): it names the key, so the request can still be
 * written to the audit log under that key.
 */
export class RefusedKeyError extends AppError {
  constructor(
    readonly keyId: string,
    message: string,
    options: { field: string; reason: string },
  ) {
    super('invalid_api_key', message, options);
  }
}

function environmentOfSecret(secret: string): Environment | undefined {
  return (Object.entries(KEY_PREFIXES) as [Environment, string][]).find(([, p]) =>
    secret.startsWith(p),
  )?.[0];
}

/**
 * Finds the live key for a secret, or throws invalid_api_key saying why (unknown,
 * revoked, or a key of another environment).
 */
export async function authenticateKey(
  db: Db,
  secret: string,
  environment: Environment,
): Promise<ApiKeyRow> {
  const keyEnvironment = environmentOfSecret(secret);
  if (keyEnvironment && keyEnvironment !== environment) {
    throw new AppError(
      'invalid_api_key',
      `This API key belongs to the ${keyEnvironment} environment; this server is the ${environment} environment.`,
      { field: 'Authorization', reason: `key of the ${keyEnvironment} environment` },
    );
  }
  const row = keyEnvironment ? (await selectApiKeyByHash(db, hashKey(secret)))[0] : undefined;
  if (!row) {
    throw new AppError('invalid_api_key', 'The API key is not valid.', {
      field: 'Authorization',
      reason: 'unknown key',
    });
  }
  if (row.revoked_at) {
    throw new RefusedKeyError(row.id, `The API key ${row.id} was revoked at ${row.revoked_at}.`, {
      field: 'Authorization',
      reason: 'revoked key',
    });
  }
  return row;
}

/**
 * Remembers authenticated keys by secret so a request does not pay a hash and an indexed read. An entry
 * holds while no other process has committed to the store (`externalChanges`) and this process
 * has not changed a key (`invalidate`, called by every write to api_keys here): a revocation,
 * from the API or the CLI, holds on the very next request.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, ApiKeyRow>();
  private external = -1;
  private local = 0;
  private seenLocal = 0;

  constructor(
    private readonly externalChanges: () => number,
    private readonly maxEntries = 10_000,
  ) {}

  invalidate(): void {
    this.local++;
  }

  async authenticate(db: Db, secret: string, environment: Environment): Promise<ApiKeyRow> {
    const external = this.externalChanges();
    if (external !== this.external || this.local !== this.seenLocal) {
      this.entries.clear();
      this.external = external;
      this.seenLocal = this.local;
    }
    // By the secret itself: hashing it first cost a SHA-256 on every request (docs/benchmarks.md).
    // The secret is in this process's memory anyway while its request runs; the map is
    // never written anywhere and empties on any change to a key.
    const cached = this.entries.get(secret);
    if (cached) return cached;
    const row = await authenticateKey(db, secret, environment);
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    // Only cache if nothing changed while we read.
    if (this.externalChanges() === external && this.local === this.seenLocal) {
      this.entries.set(secret, row);
    }
    return row;
  }
}

export async function touchApiKey(db: Db, id: string, now: Date): Promise<void> {
  await setApiKeyLastUsedAt(db, id, now.toISOString());
}

export type { KeyLevel };

/** A key's row by id (the dashboard re-reads its session's key on every request). */
export async function findApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return selectApiKey(db, id);
}
