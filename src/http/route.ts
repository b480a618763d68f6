import type Koa from 'koa';
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/store.js';
import type { ApiKeyRow } from '../db/schema.js';
import type { AuditWriter } from '../domain/audit/writer.js';
import type { Limiter } from '../domain/access/rate-limiter.js';
import type { ApiKeyCache } from '../domain/access/api-keys.js';
import type { WebhookWorker } from '../domain/webhooks/worker.js';
import type { RequestLog } from './discovery/request-log.js';
import type { SyncRunner } from '../domain/integrations/sync.js';
import type { DeliveryRunner } from '../domain/feeds/deliveries.js';

/** Who may call a route (CONTRACT part 5): read_only may read, read_write may also write, admin may do all. */
export type Permission = 'public' | 'read' | 'write' | 'admin';

/**
 * What a route handler may use. The composition root (src/app-deps.ts) builds one object that
 * serves the API and the dashboard; tests build the same over a real store.
 */
export interface RouteDeps {
  /** The store; in an idempotent request's handler, the request's transaction on it. */
  db: Db;
  config: Config;
  logger: Logger;
  /** The time; tests may pass a clock they control. */
  now: () => Date;
  /** Authenticated keys; call `invalidate()` after changing a key in this process. */
  keyCache: ApiKeyCache;
  /** The audit log's batched writer; absent when AUDIT_LOG=off. */
  audit?: AuditWriter;
  /** The webhook delivery worker `startServer` runs (test sends and manual retries go through it). */
  webhooks?: WebhookWorker;
  /** Records feed exports as analytics interactions, in batches (absent: not recorded). */
  accessLog?: RequestLog;
  /** The integrations' syncs `startServer` runs (and the settings and keys they use). */
  integrations?: SyncRunner;
  /** Sends feed deliveries, and reads a remote's later word on one (Stripe's import events). */
  deliveries?: DeliveryRunner;
  /** A second, read-only connection the caller destroys (for reads that stream the catalogue). */
  openReader?: () => Db;
}

/** What the API's middleware uses besides: admission and the per-key limits. */
export interface ApiDeps extends RouteDeps {
  /** Set when the server is draining: new requests get 503. */
  lifecycle: { shuttingDown: boolean };
  /** Per-key limits; absent when RATE_LIMITS=off. */
  limiter?: Limiter;
}

export interface Reply {
  status?: number;
  /** A value to serialise as JSON, a stream or file body, or JSON the handler already holds. */
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * A JSON body already serialised (UTF-8), sent as it is: the product reads get theirs from
 * the store (db/sqlite/product-json.ts). `Prefer: envelope` still wraps it.
 */
export class JsonBytes {
  constructor(readonly bytes: Buffer) {}
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The calling key (undefined on public routes). */
  key: ApiKeyRow | undefined;
  ctx: Koa.Context;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface RouteDef<
  PS extends z.ZodType | undefined = z.ZodType | undefined,
  QS extends z.ZodType | undefined = z.ZodType | undefined,
  BS extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Koa path, e.g. /v1/products/:id */
  path: string;
  /** OpenAPI operationId, a verb first: listProducts. */
  operationId: string;
  summary: string;
  tag: string;
  permission: Permission;
  params?: PS;
  query?: QS;
  body?: BS;
  /** POST routes that honour Idempotency-Key. */
  idempotent?: boolean;
  responses: Record<number, RouteResponse>;
  handler: (
    input: HandlerInput<Infer<PS>, Infer<QS>, Infer<BS>>,
    deps: RouteDeps,
  ) => Promise<Reply>;
}

/** Declares a route; the type parameters flow from the schemas into the handler's input. */
export function defineRoute<
  PS extends z.ZodType | undefined = undefined,
  QS extends z.ZodType | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
>(def: RouteDef<PS, QS, BS>): RouteDef {
  return def as unknown as RouteDef;
}
