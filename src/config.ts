import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { validate as validateCron } from 'node-cron';
import { z } from 'zod';

export const ENVIRONMENTS = ['production', 'staging', 'sandbox'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const PLAN_NAMES = ['starter', 'pro', 'enterprise', 'scale'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A feature switch: on/off (also true/false, 1/0, yes/no). */
const onOff = z
  .enum(['on', 'off', 'true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'on' || v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);

const retrySchedule = z
  .string()
  .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'a comma-separated list of seconds')
  .transform((s) => s.split(',').map((v) => Number(v.trim())));

/** Every setting, read from the environment once. Names are the environment variables. */
const ConfigSchema = z.object({
  PORT: port.default(8080),
  FEEDS_PORT: port.default(8081),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_DIR: z.string().min(1).default('./public'),
  DATABASE_URL: z.string().optional(),
  BASE_URL: z.url().optional(),
  FEEDS_URL: z.url().optional(),
  ENVIRONMENT: z.enum(ENVIRONMENTS).default('production'),
  DEFAULT_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/, 'a three-letter ISO 4217 code')
    .default('USD'),
  DEFAULT_PLAN: z.enum(PLAN_NAMES).default('starter'),
  STORE_NAME: z.string().min(1).default('My Store'),
  /** The store's country (ISO 3166-1 alpha-2): channel feeds' store_country and target. */
  STORE_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'a two-letter ISO 3166-1 alpha-2 code such as US')
    .default('US'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  FEEDS_CRON: z
    .string()
    .refine(validateCron, 'a cron expression (5 fields, or 6 with seconds first)')
    .default('*/15 * * * *'),
  FEEDS_DEBOUNCE_MS: z.coerce.number().int().min(0).default(5_000),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.default([
    5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
  ]),
  /** Seconds before each retry of a failed feed delivery (CONTRACT part 10). */
  FEED_DELIVERY_RETRY_SCHEDULE: retrySchedule.default([30, 120, 600, 1800, 3600]),
  ALLOW_PRIVATE_TARGETS: boolean.default(false),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(15),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).default(90),
  /** Per-key burst, per-minute and monthly limits; off only for benchmarks and trusted setups. */
  RATE_LIMITS: onOff.default(true),
  /** The audit log of authenticated requests; off only for benchmarks and trusted setups. */
  AUDIT_LOG: onOff.default(true),
  AUDIT_FLUSH_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  AUDIT_FLUSH_ROWS: z.coerce.number().int().min(1).max(100_000).default(2000),
  USAGE_FLUSH_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  // --- Several processes on one store (issue 14, branch pgmulti) ---
  /**
   * How long a claimed webhook delivery stays with its process (renewed while it works):
   * after a process is killed, another takes its deliveries over once this has passed.
   */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * Where the burst and minute windows (and the month's check) live: `memory` (one process:
   * the SQLite default) or `database` (shared by every process on the store: the PostgreSQL
   * default). Unset: chosen by the store.
   */
  RATE_LIMIT_STORE: z.enum(['memory', 'database']).optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  DISCOVERY_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  DISCOVERY_LIMIT_PER_HOUR: z.coerce.number().int().min(0).default(1000),
  DISCOVERY_LIMIT_PER_DAY: z.coerce.number().int().min(0).default(10_000),
  DISCOVERY_CACHE_MB: z.coerce.number().int().min(0).default(256),
  DISCOVERY_TRUST_PROXY: boolean.default(false),
  /** Raw analytics interactions older than this are purged daily; the daily rollups stay. */
  ANALYTICS_RETENTION_DAYS: z.coerce.number().int().min(1).default(400),
  /** Encrypts integration credentials at rest; unset: a key file in DATA_DIR (docs/integrations.md). */
  SECRET_KEY: z.string().min(32, 'at least 32 characters (openssl rand -base64 32)').optional(),
  /** The key before a rotation (`agentshelf integrations rotate-key`), still read, never written. */
  OLD_SECRET_KEY: z.string().min(1).optional(),
  SYNC_CRON: z
    .string()
    .refine(validateCron, 'a cron expression (5 fields, or 6 with seconds first)')
    .default('0 * * * *'),
  /** Platform items written per sync transaction. */
  SYNC_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Shopify Admin API version; the newest stable quarter (platforms/shopify-admin.ts). */
  SHOPIFY_API_VERSION: z
    .string()
    .regex(/^\d{4}-(01|04|07|10)$/, 'a Shopify API version such as 2026-10')
    .default('2026-10'),
});

export type Config = z.infer<typeof ConfigSchema> & {
  /** Absolute path of the SQLite file. */
  DATABASE_FILE: string;
  BASE_URL: string;
  FEEDS_URL: string;
};

export class ConfigError extends Error {}

/**
 * Reads the configuration from an environment (process.env by default).
 * Unknown variables are ignored; a bad value throws a ConfigError naming the variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(ConfigSchema.shape)
      .filter((k) => env[k] !== undefined && env[k] !== '')
      .map((k) => [k, env[k]]),
  );
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${issue.path.join('.')}: ${issue.message}`);
  }
  const c = parsed.data;
  return {
    ...c,
    DATA_DIR: path.resolve(c.DATA_DIR),
    PUBLIC_DIR: path.resolve(c.PUBLIC_DIR),
    DATABASE_FILE: path.resolve(c.DATA_DIR, 'agentshelf.sqlite'),
    BASE_URL: stripSlash(c.BASE_URL ?? `http://localhost:${c.PORT}`),
    FEEDS_URL: stripSlash(c.FEEDS_URL ?? `http://localhost:${c.FEEDS_PORT}`),
  };
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Loads a `.env` file (default: the working directory's) into an environment, when the file
 * exists, with Node's own parser. A variable already set, even to '', wins over the file, so
 * `PORT=9000 agentshelf serve` does what it says. Returns the file's path when it was read.
 */
export function loadEnvFile(
  file = path.resolve('.env'),
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${file}: cannot be read (${(err as Error).message})`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return file;
}
