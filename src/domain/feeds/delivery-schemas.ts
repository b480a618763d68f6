/**
 * A feed's delivery (CONTRACT part 10): where its file goes. `hosted` is the export URL alone
 * (the default); `sftp` uploads it under a temporary name in the same folder, then renames it,
 * to a server whose host key is pinned as OpenSSH prints it; `acp_feed_api` upserts Products
 * into an ACP Feed API; `stripe` imports the CSV into Stripe's product catalog. Credentials
 * travel at the top of the feed body, as integrations' do, and are stored encrypted.
 */
import { z } from 'zod';
import { httpUrl, text } from '../fields.js';
import { Pagination } from '../products/schemas.js';

export const FEED_DELIVERY_STATUSES = [
  'pending',
  'delivering',
  'delivered',
  'skipped',
  'held',
  'failed',
] as const;
export const FeedDeliveryStatusName = z.enum(FEED_DELIVERY_STATUSES);

const MaxDrop = z.number().min(0).max(1).default(0.2);

export const HostedDelivery = z.strictObject({ type: z.literal('hosted') });

export const SftpDelivery = z.strictObject({
  type: z.literal('sftp'),
  host: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.:[\]-]+$/, 'must be a host name or an IP address'),
  port: z.int().min(1).max(65535).default(22),
  username: text(100, { min: 1 }),
  path: z
    .string()
    .max(1024)
    .regex(
      /^\/(?:[^\0/]+\/)*[^\0/]+$/,
      'must be an absolute path of a file, such as /feeds/products.jsonl.gz',
    ),
  host_key_sha256: z
    .string()
    .regex(
      /^SHA256:[A-Za-z0-9+/]{43}$/,
      'must be the host key fingerprint as OpenSSH prints it (ssh-keygen -lf): SHA256:<43 base64 characters>',
    ),
  max_drop: MaxDrop,
});

export const AcpFeedApiDelivery = z.strictObject({
  type: z.literal('acp_feed_api'),
  url: httpUrl(2048),
  feed_id: z
    .string()
    .regex(
      /^[A-Za-z0-9._~-]{1,200}$/,
      'must be the Feed API id of the feed (letters, digits, . _ ~ -)',
    ),
  max_drop: MaxDrop,
});

/** Stripe's API; `api_url` points elsewhere only for a test double of it. */
export const STRIPE_API_URL = 'https://api.stripe.com';

export const StripeDelivery = z.strictObject({
  type: z.literal('stripe'),
  /**
   * `replace`: the catalog becomes the file (products gone from the shop leave Stripe);
   * `upsert`: the file's rows are added or updated, the rest stay.
   */
  mode: z.enum(['replace', 'upsert']).default('replace'),
  api_url: httpUrl(2048).default(STRIPE_API_URL),
  max_drop: MaxDrop,
});

export const FeedDelivery = z.discriminatedUnion('type', [
  HostedDelivery,
  SftpDelivery,
  AcpFeedApiDelivery,
  StripeDelivery,
]);
export type FeedDeliveryInput = z.input<typeof FeedDelivery>;
export type PushDelivery = Exclude<z.infer<typeof FeedDelivery>, { type: 'hosted' }>;
export type StoredDelivery = z.infer<typeof FeedDelivery>;

export const FeedCredentials = z.strictObject({
  password: z.string().min(1).max(1024).optional(),
  private_key: z.string().min(1).max(16_384).optional(),
  token: z.string().min(1).max(4096).optional(),
  /** A stripe delivery's secret or restricted API key. */
  api_key: z.string().min(1).max(4096).optional(),
  /** A stripe delivery's event destination signing secret (whsec_...), to take its events. */
  webhook_secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9]{8,200}$/, 'must be the signing secret Stripe shows (whsec_...)')
    .optional(),
});
export type FeedCredentialsInput = z.infer<typeof FeedCredentials>;

/** A stored delivery (null: hosted). */
export function parseDelivery(text: string | null): StoredDelivery {
  return text === null ? { type: 'hosted' } : (JSON.parse(text) as StoredDelivery);
}

export const FeedDeliveryRecord = z.object({
  id: z.string(),
  feed_id: z.string(),
  type: z.string(),
  status: FeedDeliveryStatusName,
  products: z.int(),
  bytes: z.int(),
  sha256: z.string(),
  reason: z.string().nullable(),
  attempts: z.int(),
  next_attempt_at: z.string().nullable(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  error: z.string().nullable(),
  remote: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
});
export type FeedDeliveryRecord = z.infer<typeof FeedDeliveryRecord>;

export const FeedDeliveryList = z.object({
  deliveries: z.array(FeedDeliveryRecord),
  pagination: Pagination,
});
