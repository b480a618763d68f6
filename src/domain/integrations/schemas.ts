import { z } from 'zod';
import { httpUrl, JsonValue, text } from '../fields.js';
import { pageFields } from '../pagination.js';
import { Pagination } from '../products/schemas.js';

export const PLATFORMS = ['shopify', 'woocommerce', 'feed'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const INTEGRATION_STATUSES = ['connected', 'disconnected', 'error'] as const;
export const SYNC_STATUSES = ['running', 'succeeded', 'failed'] as const;

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

export const SyncStatus = z.object({
  integration_id: z.string(),
  status: z.enum(['idle', 'running']),
  current: SyncRun.nullable(),
  last: SyncRun.nullable(),
});

export const SyncHistoryQuery = z.strictObject(pageFields);
export const SyncHistory = z.object({ syncs: z.array(SyncRun), pagination: Pagination });
