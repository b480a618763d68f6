import { z } from 'zod';
import { AppError } from '../../errors.js';
import { httpUrl, JsonValue, text } from '../fields.js';
import { pageFields } from '../pagination.js';
import { Pagination } from '../products/schemas.js';

export const PLATFORMS = ['shopify', 'woocommerce', 'feed'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const INTEGRATION_STATUSES = ['connected', 'disconnected', 'error'] as const;
export const SYNC_STATUSES = ['running', 'succeeded', 'failed', 'held'] as const;

/** The credential names each platform takes (CONTRACT part 8); others are refused by name. */
export const CREDENTIAL_KEYS: Record<Platform, readonly string[]> = {
  shopify: ['access_token', 'client_id', 'client_secret', 'webhook_secret'],
  woocommerce: ['consumer_key', 'consumer_secret', 'webhook_secret'],
  feed: ['username', 'password', 'token', 'webhook_secret'],
};

/**
 * A store's host name, with a port when it is not the default one: `example.myshopify.com`.
 * A URL is accepted and reduced to its host (`https://shop.example.com/` -> `shop.example.com`).
 */
export const ShopDomain = text(255, { min: 1 })
  .transform((value) => {
    const trimmed = value.trim();
    if (!trimmed.includes('://')) return trimmed.replace(/\/+$/, '').toLowerCase();
    try {
      return new URL(trimmed).host.toLowerCase();
    } catch {
      return trimmed;
    }
  })
  .check((ctx) => {
    if (
      !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/.test(
        ctx.value,
      )
    ) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: 'must be a host name such as example.myshopify.com',
      });
    }
  });

export const Credentials = z.record(z.string(), text(4096, { min: 1 }));

export const Settings = z.record(z.string(), JsonValue).check((ctx) => {
  const url = ctx.value.url;
  if (url !== undefined && !httpUrl().safeParse(url).success) {
    ctx.issues.push({
      code: 'custom',
      input: url,
      path: ['url'],
      message: 'must be an absolute http or https URL',
    });
  }
  if (JSON.stringify(ctx.value).length > 16_384) {
    ctx.issues.push({
      code: 'custom',
      input: ctx.value,
      message: 'must be at most 16 KiB of JSON',
    });
  }
});

/** The formats the feed reader reads (src/platforms/feed-records.ts FEED_FORMATS). */
export const FEED_SETTING_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'xml'] as const;
/** The largest `settings.max_bytes` of a feed: 64 GiB. */
export const MAX_FEED_BYTES = 64 * 1024 * 1024 * 1024;
/** The longest `settings.timeout_s` of a sync: a day. */
export const MAX_SYNC_TIMEOUT_S = 86_400;

/**
 * An absolute http(s) URL with a host, as written: `http:///x` (which a URL parser reads as
 * `http://x/`) and `http:/x` are refused.
 */
const SourceUrl = z.string().check((ctx) => {
  const value = ctx.value;
  let ok = value.length <= 2048 && /^https?:\/\/[^/?#\\\s]/i.test(value);
  if (ok) {
    try {
      ok = new URL(value).hostname !== '';
    } catch {
      ok = false;
    }
  }
  if (!ok) {
    ctx.issues.push({
      code: 'custom',
      input: value,
      message:
        'must be an absolute http or https URL with a host, such as https://shop.example.com/feed.csv',
    });
  }
});

const wholeNumber = (min: number, max: number, what: string) =>
  z.number().check((ctx) => {
    if (!Number.isSafeInteger(ctx.value) || ctx.value < min || ctx.value > max) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: `must be a whole number of ${what} from ${min} to ${max}`,
      });
    }
  });

/** What a sync reads of any platform's settings (sync.ts). */
const runSettings = {
  max_drop: z
    .number()
    .min(0, 'must be a number from 0 to 1')
    .max(1, 'must be a number from 0 to 1'),
  timeout_s: wholeNumber(1, MAX_SYNC_TIMEOUT_S, 'seconds'),
};
const currency = z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code');
const scheme = z.enum(['http', 'https']);

/**
 * Every setting each platform reads (src/platforms/*.ts), checked when an integration is
 * created or changed; any other key is refused by name.
 */
export const PLATFORM_SETTINGS = {
  feed: z.strictObject({
    ...runSettings,
    url: SourceUrl,
    max_bytes: wholeNumber(1, MAX_FEED_BYTES, 'bytes'),
    format: z.enum(FEED_SETTING_FORMATS),
    timeout_ms: wholeNumber(1, MAX_SYNC_TIMEOUT_S * 1000, 'milliseconds'),
  }),
  shopify: z.strictObject({
    ...runSettings,
    api_version: z
      .string()
      .regex(/^(\d{4}-(01|04|07|10))?$/, 'must be a Shopify API version such as 2026-04')
      .nullable(),
    bulk_threshold: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'products'),
    bulk_poll_seconds: z.number().min(0, 'must be a number of seconds of 0 or more').max(3600),
    currency,
    scheme,
  }),
  woocommerce: z.strictObject({ ...runSettings, currency, scheme }),
} satisfies Record<Platform, z.ZodObject>;

/**
 * A platform's settings, checked: 422 naming `settings.<key>` and the problem (an unknown
 * key, a value out of range, a URL without a host).
 */
export function checkSettings(platform: Platform, settings: Record<string, unknown>): void {
  const schema = PLATFORM_SETTINGS[platform].partial();
  const parsed = schema.safeParse(settings);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const known = Object.keys(PLATFORM_SETTINGS[platform].shape).join(', ');
    throw new AppError('invalid_field', `settings.${key} is not a ${platform} setting.`, {
      field: `settings.${[...path, key].join('.')}`,
      reason: `is not a ${platform} setting (known: ${known})`,
    });
  }
  const field = ['settings', ...path].join('.');
  const reason =
    issue.code === 'invalid_type'
      ? `must be ${issue.expected === 'number' ? 'a number' : `a ${issue.expected}`}`
      : issue.code === 'invalid_value'
        ? `must be one of ${issue.values.map(String).join(', ')}`
        : issue.message;
  throw new AppError('invalid_field', `${field} ${reason}.`, { field, reason });
}

export const IntegrationCreate = z.strictObject({
  platform: z.enum(PLATFORMS),
  shop_domain: ShopDomain.optional(),
  credentials: Credentials.optional(),
  settings: Settings.optional(),
});
export type IntegrationCreateInput = z.infer<typeof IntegrationCreate>;

export const IntegrationUpdate = z.strictObject({
  shop_domain: ShopDomain.optional(),
  credentials: Credentials.nullable().optional(),
  settings: Settings.optional(),
  status: z.enum(['connected', 'disconnected']).optional(),
});
export type IntegrationUpdateInput = z.infer<typeof IntegrationUpdate>;

export const Integration = z.object({
  id: z.string(),
  platform: z.enum(PLATFORMS),
  shop_domain: z.string(),
  status: z.enum(INTEGRATION_STATUSES),
  settings: z.record(z.string(), JsonValue),
  credentials_set: z.boolean(),
  last_sync: z.string().nullable(),
  last_error: z.string().nullable(),
  product_count: z.int(),
  sync_status: z.enum(['idle', 'running']),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Integration = z.infer<typeof Integration>;

export const IntegrationListQuery = z.strictObject(pageFields);
export const IntegrationList = z.object({
  integrations: z.array(Integration),
  pagination: Pagination,
});

export const IntegrationTestResult = z.object({
  status: z.enum(['success', 'failure']),
  message: z.string(),
  details: z.object({
    connection_status: z.enum(INTEGRATION_STATUSES),
    sync_status: z.enum(['idle', 'running']),
    product_count: z.int(),
    last_sync: z.string().nullable(),
  }),
});
export type IntegrationTestResult = z.infer<typeof IntegrationTestResult>;

export const SyncError = z.object({
  external_id: z.string().nullable(),
  field: z.string(),
  reason: z.string(),
});
export type SyncError = z.infer<typeof SyncError>;

export const SyncRun = z.object({
  id: z.string(),
  integration_id: z.string(),
  status: z.enum(SYNC_STATUSES),
  trigger: z.string(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  duration_ms: z.int().nullable(),
  fetched: z.int(),
  created: z.int(),
  updated: z.int(),
  unchanged: z.int(),
  deactivated: z.int(),
  failed: z.int(),
  errors: z.array(SyncError),
  error: z.string().nullable(),
});
export type SyncRun = z.infer<typeof SyncRun>;

/** `POST /integrations/:id/sync`: no body, or `{"force": true}`. */
export const SyncRequest = z.strictObject({ force: z.boolean().optional() });

export const SyncStatus = z.object({
  integration_id: z.string(),
  status: z.enum(['idle', 'running']),
  current: SyncRun.nullable(),
  last: SyncRun.nullable(),
});

export const SyncHistoryQuery = z.strictObject({
  status: z.enum(SYNC_STATUSES).optional(),
  ...pageFields,
});
export const SyncHistory = z.object({ syncs: z.array(SyncRun), pagination: Pagination });
