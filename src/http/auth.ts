import type Koa from 'koa';
import { RefusedKeyError, touchApiKey } from '../domain/access/api-keys.js';
import type { ApiKeyRow, KeyLevel } from '../db/schema.js';
import { AppError } from '../errors.js';
import { limitRequest } from './limits.js';
import { requestState } from './request-state.js';
import type { ApiDeps, Permission, RouteDef } from './route.js';

const LAST_USED_EVERY_MS = 60_000;

const ALLOWED: Record<Exclude<Permission, 'public'>, readonly KeyLevel[]> = {
  read: ['read_only', 'read_write', 'admin'],
  write: ['read_write', 'admin'],
  admin: ['admin'],
};

/** The key levels a route admits; undefined for a public route. */
export function levelsAllowed(permission: Permission): readonly KeyLevel[] | undefined {
  return permission === 'public' ? undefined : ALLOWED[permission];
}

/** Lets a request in, or throws why not. */
export type Admit = (
  ctx: Koa.Context,
  route: RouteDef,
  allowed: readonly KeyLevel[],
) => Promise<void>;

/**
 * The check of the caller: the key authenticates; its limits are checked before its
 * permission, so a key that keeps calling what it may not still uses capacity.
 */
export function createAdmission(deps: ApiDeps): Admit {
  // When each key's last_used_at was last written by this app.
  const lastTouched = new Map<string, number>();

  async function authenticate(ctx: Koa.Context): Promise<ApiKeyRow> {
    const header = ctx.get('authorization');
    if (!header) {
      throw new AppError(
        'missing_api_key',
        'No API key. Send the header Authorization: Bearer <API_KEY>.',
        { field: 'Authorization', reason: 'missing' },
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new AppError(
        'invalid_api_key',
        'The Authorization header must be "Bearer <API_KEY>".',
        { field: 'Authorization', reason: 'not a Bearer token' },
      );
    }
    const key = await deps.keyCache.authenticate(deps.db, match[1]!, deps.config.ENVIRONMENT);
    const now = requestState(ctx).receivedAt;
    const last = lastTouched.get(key.id) ?? 0;
    if (now.getTime() - last > LAST_USED_EVERY_MS) {
      // last_used_at is advisory: written at most once a minute per key, so reads stay reads.
      lastTouched.set(key.id, now.getTime());
      await touchApiKey(deps.db, key.id, now);
    }
    return key;
  }

  return async (ctx, route, allowed) => {
    const state = requestState(ctx);
    let key: ApiKeyRow;
    try {
      key = await authenticate(ctx);
    } catch (err) {
      // A revoked key is still known: its refusal goes to the audit log under its id.
      if (err instanceof RefusedKeyError) state.auditKeyId = err.keyId;
      throw err;
    }
    state.key = key;
    state.auditKeyId = key.id;
    if (deps.limiter) {
      const decided = limitRequest(ctx, deps.limiter, key);
      if (decided) await decided;
    }
    if (!allowed.includes(key.level)) {
      throw new AppError(
        'forbidden',
        `This ${key.level} key cannot ${route.method.toUpperCase()} ${route.path}; it needs ${allowed.join(' or ')}.`,
        { field: 'Authorization', reason: `needs ${allowed.join(' or ')}` },
      );
    }
  };
}
