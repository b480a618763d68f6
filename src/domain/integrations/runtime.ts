import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../db/store.js';
import type { IntegrationRow } from '../../db/schema.js';
import { updateIntegrationRow } from '../../db/queries/integrations.js';
import { createHttpClient, type HttpClient } from '../../net/http-client.js';
import { VERSION } from '../../version.js';
import type { SecretBox } from './secret-box.js';
import { SourceError, type IntegrationSource, type SourceContext } from './source.js';
import type { Platform } from './schemas.js';

/** The platform sources by name (src/platforms/index.ts holds the real ones). */
export type SourceRegistry = Partial<Record<Platform, IntegrationSource>>;

/**
 * Everything the integrations need from the composition root: the store, the settings they
 * read, the key box, the platform sources, and the clock. The server, the CLI and the tests
 * build one each.
 */
export interface IntegrationEnv {
  db: Db;
  box: SecretBox;
  sources: SourceRegistry;
  logger: Logger;
  now: () => Date;
  /** Platform pacing and polling waits (tests pass a fast one). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  allowPrivate: boolean;
  defaultCurrency: string;
  /** SHOPIFY_API_VERSION (unset: the Shopify source's own default). */
  shopifyApiVersion?: string;
  /** Items per write transaction (default 500). */
  batchSize?: number;
  /** An HTTP client of the tests' choosing (retry waits), else a guarded one per run. */
  httpClient?: (signal: AbortSignal) => HttpClient;
  /** The longest `POST /integrations/:id/test` reads the platform (default 15 s). */
  testTimeoutMs?: number;
  /** The longest silence of a platform's answer before the read fails (default 30 s). */
  idleTimeoutMs?: number;
  /**
   * Awaited inside a sync's final transaction before each page of its staged items is
   * written (page 0 first): tests hold an apply open with it.
   */
  inApply?: (page: number) => Promise<void>;
}

export const DEFAULT_TEST_TIMEOUT_MS = 15_000;

/**
 * `signal`, also aborted after `ms` with a SourceError that says so: every request and wait of
 * the run stops, and the run's failure reads `message`.
 */
function withDeadline(signal: AbortSignal, ms: number, message: string): AbortSignal {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new SourceError(message, 'unavailable')), ms);
  timer.unref();
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return AbortSignal.any([signal, deadline.signal]);
}

/** A test's signal: it answers within `env.testTimeoutMs` (default 15 s) whatever the platform does. */
export function testSignal(env: IntegrationEnv, signal: AbortSignal): AbortSignal {
  const ms = env.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
  return withDeadline(
    signal,
    ms,
    `the platform did not answer in full within ${ms / 1000} s: it is too slow, or stalled`,
  );
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  delay(ms, undefined, signal ? { signal } : {});

export function sourceOf(env: IntegrationEnv, platform: Platform): IntegrationSource {
  const source = env.sources[platform];
  if (!source) throw new Error(`no source for platform ${platform} in this build`);
  return source;
}

/** Decrypted credentials, or null when none are set. */
export function credentialsOf(
  env: IntegrationEnv,
  row: IntegrationRow,
): Record<string, string> | null {
  if (row.credentials === null) return null;
  return JSON.parse(env.box.decrypt(row.credentials)) as Record<string, string>;
}

export function encryptCredentials(
  env: Pick<IntegrationEnv, 'box'>,
  credentials: Record<string, string> | null | undefined,
): string | null {
  if (!credentials || Object.keys(credentials).length === 0) return null;
  return env.box.encrypt(JSON.stringify(credentials));
}

export interface RunContext {
  ctx: SourceContext;
  /** The state the source asked to keep, once the run ends well (undefined: unchanged). */
  newState(): Record<string, unknown> | undefined;
}

/** The SourceContext of one run (a sync, a test, an inbound webhook). */
export function openSourceContext(
  env: IntegrationEnv,
  row: IntegrationRow,
  signal: AbortSignal,
): RunContext {
  const sleep = env.sleep ?? defaultSleep;
  const logger = env.logger.child({ integration: row.id, platform: row.platform });
  const http =
    env.httpClient?.(signal) ??
    createHttpClient({
      allowPrivate: env.allowPrivate,
      signal,
      sleep,
      userAgent: `agentshelf/${VERSION}`,
      ...(env.idleTimeoutMs !== undefined ? { timeoutMs: env.idleTimeoutMs } : {}),
      onRetry: (info) =>
        logger.warn(
          { url: info.url, attempt: info.attempt, waitMs: info.waitMs, reason: info.reason },
          'platform request retried',
        ),
    });
  let state: Record<string, unknown> | undefined;
  const ctx: SourceContext = {
    integrationId: row.id,
    shopDomain: row.shop_domain,
    credentials: credentialsOf(env, row),
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    http,
    defaultCurrency: env.defaultCurrency,
    ...(env.shopifyApiVersion ? { shopifyApiVersion: env.shopifyApiVersion } : {}),
    signal,
    logger,
    now: env.now,
    sleep: (ms) => sleep(ms, signal),
    state: JSON.parse(row.state) as Record<string, unknown>,
    setState: (next) => {
      state = { ...next };
    },
    saveCredentials: async (credentials) => {
      await updateIntegrationRow(env.db, row.id, {
        credentials: encryptCredentials(env, credentials),
        updated_at: env.now().toISOString(),
      });
    },
  };
  return { ctx, newState: () => state };
}
