import path from 'node:path';
import { pino } from 'pino';
import type { Test } from 'tap';
import { loadConfig, type Config } from '../../src/config.js';
import { createApiKey } from '../../src/domain/access/api-keys.js';
import type { KeyLevel } from '../../src/db/schema.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';
import { testStoreEnv } from './store.js';
import { ownTestDir } from './testdir.js';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  server: RunningServer;
  config: Config;
  dir: string;
  keys: Record<KeyLevel, string>;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>;
  createKey(
    level: KeyLevel,
    extra?: Record<string, unknown>,
  ): Promise<{ id: string; secret: string }>;
}

/**
 * Starts the real platform API on an ephemeral port over a real SQLite file in the test's
 * own directory (or a fresh PostgreSQL database with AGENTSHELF_TEST_STORE=postgres, kept
 * for that directory), with one key of each level. Closed when the test ends.
 */
export async function startTestServer(
  t: Test,
  env: Record<string, string> = {},
  options: {
    now?: () => Date;
    /** Run the pipeline schedule inside the server, as `serve` does. */
    pipeline?: boolean;
    /** An existing directory (a restart over the same store); default a fresh ownTestDir(t). */
    dir?: string;
    /** What the integrations use in place of the real ones (platform waits, say). */
    integrations?: StartOptions['integrations'];
    /** The discovery server's request-log interval (StartOptions.discoveryFlushMs). */
    discoveryFlushMs?: number;
  } = {},
): Promise<TestServer> {
  const dir = options.dir ?? ownTestDir(t);
  const config = loadConfig({
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    PORT: '0',
    FEEDS_PORT: '0',
    LOG_LEVEL: 'silent',
    // pgmulti: run any test file with the limits kept in the store (the PostgreSQL default).
    ...(process.env.AGENTSHELF_TEST_RATE_LIMIT_STORE
      ? { RATE_LIMIT_STORE: process.env.AGENTSHELF_TEST_RATE_LIMIT_STORE }
      : {}),
    ...(await testStoreEnv(dir, { fresh: options.dir === undefined })),
    ...env,
  });
  const server = await startServer(config, {
    logger: pino({ level: 'silent' }),
    ...(options.now ? { now: options.now } : {}),
    ...(options.pipeline ? { pipeline: true } : {}),
    ...(options.integrations ? { integrations: options.integrations } : {}),
    ...(options.discoveryFlushMs ? { discoveryFlushMs: options.discoveryFlushMs } : {}),
  });
  t.teardown(() => server.close());
  const createKey = async (level: KeyLevel, extra: Record<string, unknown> = {}) => {
    const { key, secret } = await createApiKey(
      server.store.db,
      { level, ...extra },
      {
        environment: config.ENVIRONMENT,
        defaultPlan: config.DEFAULT_PLAN,
      },
    );
    return { id: key.id, secret };
  };
  // The ready-made keys allow far more than any test sends, so only the tests of limits
  // (which create their own keys) ever meet a 429.
  const roomy = { rpm: 10_000_000, burst: 20_000_000, monthly: 1_000_000_000_000 };
  const keys = {
    admin: (await createKey('admin', roomy)).secret,
    read_write: (await createKey('read_write', roomy)).secret,
    read_only: (await createKey('read_only', roomy)).secret,
  };
  const request = async (method: string, urlPath: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? keys.admin : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = opts.raw;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(server.url + urlPath, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };
  return { url: server.url, server, config, dir, keys, request, createKey };
}

/** A valid product create body, with overrides. */
export function productBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Trail Shoe',
    price: 79.99,
    category: 'Apparel > Shoes',
    images: ['https://img.example.com/a.jpg'],
    attributes: { brand: 'Northwind', features: ['Light'] },
    ...overrides,
  };
}
