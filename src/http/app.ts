import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { RefusedKeyError, touchApiKey } from '../domain/access/api-keys.js';
import {
  claimIdempotencyKey,
  completeIdempotentRequest,
  fingerprintRequest,
  releaseIdempotentRequest,
} from '../domain/access/idempotency.js';
import type { ApiKeyRow, KeyLevel } from '../db/schema.js';
import { auditRequest } from './audit.js';
import { statusOf, writeError } from './error-handler.js';
import { limitRequest } from './limits.js';
import {
  JsonBytes,
  requestState,
  type AppDeps,
  type Permission,
  type Reply,
  type RequestState,
  type RouteDef,
} from './route.js';
import { parseInput } from './validate.js';
import { allRoutes } from './routes/index.js';

export const API_VERSION = 'v1';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LAST_USED_EVERY_MS = 60_000;

const ALLOWED: Record<Exclude<Permission, 'public'>, readonly KeyLevel[]> = {
  read: ['read_only', 'read_write', 'admin'],
  write: ['read_write', 'admin'],
  admin: ['admin'],
};

function wantsEnvelope(header: string): boolean {
  if (header === '') return false;
  return header
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .includes('envelope');
}

/** Builds the platform API. The same app serves tests, `serve` and the benchmarks. */
export function createApp(deps: AppDeps, routes: RouteDef[] = allRoutes): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const lastTouched = new Map<string, number>();

  // Request id, version, response style, draining, and the one error boundary.
  app.use(async (ctx, next) => {
    const started = performance.now();
    const given = ctx.get('x-request-id');
    const state: RequestState = {
      requestId: REQUEST_ID.test(given) ? given : `req_${randomBase62(20)}`,
      envelope: wantsEnvelope(ctx.get('prefer')),
      receivedAt: deps.now(),
      key: undefined,
      auditKeyId: undefined,
      raw: false,
      jsonBytes: false,
    };
    ctx.state = state;
    ctx.set('X-Request-Id', state.requestId);
    ctx.set('X-API-Version', API_VERSION);
    if (state.envelope) ctx.set('Preference-Applied', 'envelope');
    try {
      const version = ctx.get('x-api-version');
      if (version && version !== API_VERSION) {
        throw new AppError(
          'invalid_query_parameter',
          `X-API-Version '${version}' is not supported; supported versions: ${API_VERSION}.`,
          { field: 'X-API-Version', reason: `must be ${API_VERSION}` },
        );
      }
      if (deps.lifecycle.shuttingDown) {
        throw new AppError('unavailable', 'The server is shutting down; retry shortly.', {
          retryAfter: 1,
        });
      }
      await next();
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
        throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
          field: 'method',
          reason: `allowed: ${ctx.response.get('Allow') || 'none'}`,
        });
      }
      if (ctx.status === 404 && ctx.body == null) {
        throw new AppError('not_found', `No route ${ctx.method} ${ctx.path}.`, {
          field: 'path',
          reason: 'no such route',
        });
      }
    } catch (err) {
      writeError(ctx, err, deps.logger);
    }
    if (
      state.envelope &&
      ctx.status < 400 &&
      ctx.body !== undefined &&
      ctx.body !== null &&
      !state.raw
    ) {
      const meta = { request_id: state.requestId, timestamp: deps.now().toISOString() };
      ctx.body = state.jsonBytes
        ? Buffer.concat([
            ENVELOPE_OPEN,
            ctx.body as Buffer,
            Buffer.from(`,"meta":${JSON.stringify(meta)}}`),
          ])
        : { success: true, data: ctx.body, meta };
    }
    if (deps.audit) auditRequest(ctx, deps.audit);
    if (deps.logger.isLevelEnabled('info')) {
      deps.logger.info(
        {
          request_id: state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          key_id: state.key?.id,
        },
        'request',
      );
    }
  });

  const router = new Router();
  for (const route of routes) {
    router[route.method](route.path, ...middlewareFor(route));
  }
  app.use(router.routes());
  app.use(
    // Sets 405 or 501 with an Allow header; the boundary above turns that into an error body.
    router.allowedMethods(),
  );
  return app;

  /**
   * The route's steps in order: authentication, limits and permission (one step, as they are
   * one check of the caller), the JSON body, Idempotency-Key, then the handler. A read has
   * no body and no idempotency, so it runs as a single middleware: every Koa middleware is
   * another promise and closure per request, on the path that has to be fastest.
   */
  function middlewareFor(route: RouteDef): Koa.Middleware[] {
    const allowed = route.permission === 'public' ? undefined : ALLOWED[route.permission];
    const handle = async (ctx: Koa.Context): Promise<void> => {
      const reply = await route.handler(
        {
          params: route.params ? parseInput(route.params, ctx.params, 'params') : undefined,
          query: route.query ? parseInput(route.query, { ...ctx.query }, 'query') : undefined,
          body: route.body ? parseInput(route.body, ctx.request.body ?? {}, 'body') : undefined,
          key: requestState(ctx).key,
          ctx,
        },
        deps,
      );
      send(ctx, reply);
    };
    if (!route.body && !route.idempotent) {
      if (!allowed) return [handle];
      return [
        async (ctx) => {
          await admit(ctx, route, allowed);
          await handle(ctx);
        },
      ];
    }
    const chain: Koa.Middleware[] = [];
    if (allowed) {
      chain.push(async (ctx, next) => {
        await admit(ctx, route, allowed);
        await next();
      });
    }
    if (route.body) {
      const parse = bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', encoding: 'utf-8' });
      chain.push(async (ctx, next) => {
        const hasBody =
          Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
        if (hasBody && !ctx.is('application/json')) {
          throw new AppError('invalid_request', 'Content-Type must be application/json.', {
            field: 'Content-Type',
            reason: 'must be application/json',
          });
        }
        await parse(ctx, next);
      });
    }
    if (route.idempotent) chain.push(idempotency);
    chain.push(handle);
    return chain;
  }

  /**
   * Lets a request in: the key authenticates; its limits are checked before its permission,
   * so a key that keeps calling what it may not still uses capacity.
   */
  async function admit(
    ctx: Koa.Context,
    route: RouteDef,
    allowed: readonly KeyLevel[],
  ): Promise<void> {
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
    if (deps.limiter) limitRequest(ctx, deps.limiter, key);
    if (!allowed.includes(key.level)) {
      throw new AppError(
        'forbidden',
        `This ${key.level} key cannot ${route.method.toUpperCase()} ${route.path}; it needs ${allowed.join(' or ')}.`,
        { field: 'Authorization', reason: `needs ${allowed.join(' or ')}` },
      );
    }
  }

  async function authenticate(ctx: Koa.Context): Promise<ApiKeyRow> {
    const header = ctx.get('authorization');
    if (!header) {
      throw new AppError(
        'missing_api_key',
        'No API key. Send the header Authorization: Bearer <API_KEY>.',
        {
          field: 'Authorization',
          reason: 'missing',
        },
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new AppError(
        'invalid_api_key',
        'The Authorization header must be "Bearer <API_KEY>".',
        {
          field: 'Authorization',
          reason: 'not a Bearer token',
        },
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

  async function idempotency(ctx: Koa.Context, next: Koa.Next): Promise<void> {
    const idemKey = ctx.get('idempotency-key');
    if (!idemKey) return next();
    if (idemKey.length > 255) {
      throw new AppError('invalid_request', 'Idempotency-Key must be at most 255 characters.', {
        field: 'Idempotency-Key',
        reason: 'must be at most 255 characters',
      });
    }
    const key = requestState(ctx).key!;
    const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
    const stored = await claimIdempotencyKey(
      deps.db,
      key.id,
      idemKey,
      fingerprintRequest(ctx.method, ctx.path, raw),
      deps.now(),
    );
    if (stored) {
      ctx.set('Idempotent-Replayed', 'true');
      ctx.status = stored.status;
      ctx.body = stored.body;
      return;
    }
    try {
      await next();
    } catch (err) {
      // Keep the outcome of a request we refused (4xx); forget one that failed on our side.
      const status = err instanceof AppError ? statusOf(err.kind) : 500;
      if (status >= 500 || status === 429) {
        await releaseIdempotentRequest(deps.db, key.id, idemKey);
      } else {
        writeError(ctx, err, deps.logger);
        await completeIdempotentRequest(deps.db, key.id, idemKey, {
          status: ctx.status,
          body: ctx.body,
        });
        return;
      }
      throw err;
    }
    await completeIdempotentRequest(deps.db, key.id, idemKey, {
      status: ctx.status,
      body: ctx.body,
    });
  }
}

const ENVELOPE_OPEN = Buffer.from('{"success":true,"data":');

function send(ctx: Koa.Context, reply: Reply): void {
  if (reply.headers) {
    for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
  }
  ctx.status = reply.status ?? 200;
  if (reply.body instanceof JsonBytes) {
    requestState(ctx).jsonBytes = true;
    // The header itself: `ctx.type = 'json'` looks the type up on every request.
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = reply.body.bytes;
  } else if (reply.body !== undefined) {
    ctx.body = reply.body;
  }
}
