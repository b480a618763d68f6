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
  DATABASE_DIRECT_URL: z.string().optional(),
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
  /**
   * How long a claimed feed delivery stays with its runner (renewed while it sends): after
   * its process dies mid-send, another runner retakes it once this has passed.
   */
  FEED_DELIVERY_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /**
   * The longest a delivery waits on the remote's processing of what it sent (Stripe's
   * import) before it is recorded with the remote's state then.
   */
  FEED_DELIVERY_WAIT_SECONDS: z.coerce.number().min(0).max(3600).default(600),
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
  // --- Publishing to object storage (issue 24, CONTRACT part 12) ---
  /** `s3://BUCKET[/PREFIX]?endpoint=URL&region=R[&style=virtual][&encodings=auto|siblings|plain]`. */
  PUBLISH_TARGET: z
    .string()
    .superRefine((value, ctx) => {
      try {
        parsePublishTarget(value);
      } catch (err) {
        const message = (err as Error).message.replace(/^PUBLISH_TARGET: /, '');
        ctx.addIssue({ code: 'custom', message });
      }
    })
    .optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  /** Seconds an object the tree no longer holds stays in the bucket before it is deleted. */
  PUBLISH_DELETE_GRACE: z.coerce.number().int().min(0).default(3600),
  /** Deletions one run makes at most without `agentshelf publish --force`. */
  PUBLISH_MAX_DELETES: z.coerce.number().int().min(0).default(256),
  /**
   * Objects above this many bytes go up as a multipart upload (S3 takes at most 5 GiB in one
   * PUT); at least 5 MiB, S3's least part.
   */
  PUBLISH_MULTIPART_THRESHOLD: z.coerce
    .number()
    .int()
    .min(5 * 1024 ** 2)
    .max(5 * 1024 ** 3)
    .default(64 * 1024 ** 2),
  /** Bytes a part of a multipart upload, 5 MiB (S3's least) to 5 GiB; raised to fit 10,000 parts. */
  PUBLISH_PART_SIZE: z.coerce
    .number()
    .int()
    .min(5 * 1024 ** 2)
    .max(5 * 1024 ** 3)
    .default(16 * 1024 ** 2),
  /** `cloudflare://ZONE | fastly://SERVICE | cloudfront://DISTRIBUTION | bunny://PULL_ZONE | webhook`. */
  CDN_PURGE: z
    .string()
    .superRefine((value, ctx) => {
      try {
        parseCdnPurge(value);
      } catch (err) {
        const message = (err as Error).message.replace(/^CDN_PURGE: /, '');
        ctx.addIssue({ code: 'custom', message });
      }
    })
    .optional(),
  CLOUDFLARE_API_TOKEN: z.string().min(1).optional(),
  FASTLY_API_TOKEN: z.string().min(1).optional(),
  BUNNY_API_KEY: z.string().min(1).optional(),
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
  if (c.PUBLISH_TARGET && (!c.AWS_ACCESS_KEY_ID || !c.AWS_SECRET_ACCESS_KEY)) {
    throw new ConfigError(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: both are required when PUBLISH_TARGET is set',
    );
  }
  if (c.CDN_PURGE) {
    const needed = CDN_TOKENS[parseCdnPurge(c.CDN_PURGE).kind];
    const missing = needed.filter((name) => !c[name]);
    if (missing.length)
      throw new ConfigError(`${missing.join(' and ')}: required when CDN_PURGE is ${c.CDN_PURGE}`);
  }
  return {
    ...c,
    DATA_DIR: path.resolve(c.DATA_DIR),
    PUBLIC_DIR: path.resolve(c.PUBLIC_DIR),
    DATABASE_FILE: path.resolve(c.DATA_DIR, 'agentshelf.sqlite'),
    BASE_URL: stripSlash(c.BASE_URL ?? `http://localhost:${c.PORT}`),
    FEEDS_URL: stripSlash(c.FEEDS_URL ?? `http://localhost:${c.FEEDS_PORT}`),
  };
}

/** Where PUBLISH_TARGET points: a bucket (and key prefix) of an S3-compatible store. */
export interface PublishTarget {
  bucket: string;
  /** '' or a key prefix ending in '/'. */
  prefix: string;
  /** The store's address (path style: `ENDPOINT/BUCKET/KEY`; virtual: `BUCKET.HOST/KEY`). */
  endpoint: URL;
  region: string;
  style: 'path' | 'virtual';
  /** `siblings`: .gz and .br objects beside the plain ones; `plain`: the plain objects only. */
  encodings: 'siblings' | 'plain';
  /** The target in words, for logs and the publications list (it holds no credential). */
  label: string;
}

const TARGET_PARAMS = new Set(['endpoint', 'region', 'style', 'encodings']);
const TARGET_SHAPE = 'expected s3://BUCKET[/PREFIX]?endpoint=URL&region=R';

/**
 * Parses PUBLISH_TARGET. `encodings=auto` (the default) stores plain objects on Cloudflare R2
 * and Backblaze B2 (whose CDN compresses by itself) and compressed siblings elsewhere.
 * Throws a ConfigError naming the variable and the problem.
 */
export function parsePublishTarget(value: string): PublishTarget {
  const fail = (problem: string): never => {
    throw new ConfigError(`PUBLISH_TARGET: ${problem}`);
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`not a URL; ${TARGET_SHAPE}`);
  }
  if (url.protocol !== 's3:') fail(`the scheme is ${url.protocol.slice(0, -1)}; ${TARGET_SHAPE}`);
  if (url.username || url.password)
    fail(
      'credentials do not belong in the target: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    );
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/i.test(bucket))
    fail(`the bucket name '${bucket}' is not 3-63 letters, digits, dots, hyphens or underscores`);
  let path = '';
  try {
    path = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  } catch {
    fail('the prefix is not valid percent-encoding');
  }
  if (path && path.split('/').some((s) => s === '' || s === '.' || s === '..'))
    fail(`the prefix '${path}' has an empty, . or .. segment`);
  for (const key of url.searchParams.keys())
    if (!TARGET_PARAMS.has(key))
      fail(`unknown parameter '${key}' (known: ${[...TARGET_PARAMS].join(', ')})`);
  const param = (name: string) => url.searchParams.get(name) ?? undefined;
  const regionParam = param('region');
  const endpointParam =
    param('endpoint') ?? (regionParam ? `https://s3.${regionParam}.amazonaws.com` : undefined);
  if (!endpointParam) return fail(`endpoint= (or region= for AWS S3) is missing; ${TARGET_SHAPE}`);
  let endpoint: URL;
  try {
    endpoint = new URL(endpointParam);
  } catch {
    return fail(`endpoint '${endpointParam}' is not an absolute URL`);
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:')
    fail(`endpoint '${endpointParam}' is not http or https`);
  if (endpoint.search || endpoint.hash || endpoint.username || endpoint.password)
    fail(`endpoint '${endpointParam}' must be a plain address (no query, fragment or credentials)`);
  const host = endpoint.hostname.toLowerCase();
  const cloudflare = host.endsWith('.r2.cloudflarestorage.com');
  const region = regionParam ?? (cloudflare ? 'auto' : 'us-east-1');
  if (!/^[a-z0-9-]{1,64}$/.test(region)) fail(`region '${region}' is not a region name`);
  const style = param('style') ?? 'path';
  if (style !== 'path' && style !== 'virtual')
    return fail(`style must be path or virtual, not '${style}'`);
  const encodings = param('encodings') ?? 'auto';
  if (encodings !== 'auto' && encodings !== 'siblings' && encodings !== 'plain')
    return fail(`encodings must be auto, siblings or plain, not '${encodings}'`);
  const plainByDefault = cloudflare || host.endsWith('.backblazeb2.com');
  const prefix = path ? `${path}/` : '';
  return {
    bucket,
    prefix,
    endpoint,
    region,
    style,
    encodings: encodings === 'auto' ? (plainByDefault ? 'plain' : 'siblings') : encodings,
    label: `s3://${bucket}/${prefix} at ${endpoint.origin}${endpoint.pathname.replace(/\/$/, '')}`,
  };
}

export const CDN_KINDS = ['cloudflare', 'fastly', 'cloudfront', 'bunny', 'webhook'] as const;
export type CdnKind = (typeof CDN_KINDS)[number];

/** Each CDN's credentials, from the variable its own tools read. */
const CDN_TOKENS: Record<
  CdnKind,
  (
    | 'CLOUDFLARE_API_TOKEN'
    | 'FASTLY_API_TOKEN'
    | 'BUNNY_API_KEY'
    | 'AWS_ACCESS_KEY_ID'
    | 'AWS_SECRET_ACCESS_KEY'
  )[]
> = {
  cloudflare: ['CLOUDFLARE_API_TOKEN'],
  fastly: ['FASTLY_API_TOKEN'],
  cloudfront: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
  bunny: ['BUNNY_API_KEY'],
  webhook: [],
};

/** Where CDN_PURGE sends the purge of the changed URLs after an upload. */
export interface CdnPurgeSetting {
  kind: CdnKind;
  /** The zone, service, distribution or pull zone ('' for webhook). */
  id: string;
  /** The provider's API base, when `?api=` replaces it (a proxy, a test double). */
  api: string | undefined;
}

/** Parses CDN_PURGE; throws a ConfigError naming the variable and the problem. */
export function parseCdnPurge(value: string): CdnPurgeSetting {
  const fail = (problem: string): never => {
    throw new ConfigError(`CDN_PURGE: ${problem}`);
  };
  if (value === 'webhook') return { kind: 'webhook', id: '', api: undefined };
  const shape =
    'expected cloudflare://ZONE, fastly://SERVICE, cloudfront://DISTRIBUTION, bunny://PULL_ZONE or webhook';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`not a purge target; ${shape}`);
  }
  const kind = url.protocol.slice(0, -1) as CdnKind;
  if (kind === 'webhook' || !CDN_KINDS.includes(kind))
    return fail(`unknown CDN '${kind}'; ${shape}`);
  const id = url.hostname;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) fail(`'${id}' is not a ${kind} identifier`);
  for (const key of url.searchParams.keys())
    if (key !== 'api') fail(`unknown parameter '${key}' (known: api)`);
  const api = url.searchParams.get('api') ?? undefined;
  if (api !== undefined && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(api))
    fail(`api '${api}' is not an http(s) address`);
  return { kind, id, api: api?.replace(/\/+$/, '') };
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
