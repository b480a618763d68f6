import { z } from 'zod';
import { CLIENT_ID_PATTERN, text } from '../fields.js';
import { pageFields } from '../pagination.js';
import { Category, Pagination, ProductStatus } from '../products/schemas.js';
import { FeedCredentials, FeedDelivery } from './delivery-schemas.js';

export const FEED_FORMATS = ['json', 'jsonl', 'csv', 'tsv', 'xml'] as const;
export const FeedFormat = z.enum(FEED_FORMATS);
export const FEED_PROFILE_NAMES = ['agentshelf', 'openai', 'google', 'acp', 'stripe'] as const;
export const FeedProfileName = z.enum(FEED_PROFILE_NAMES);
export const FeedCompression = z.enum(['gzip']);

const CountryCode = z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as US');

/** The channel settings of a feed (CONTRACT part 10); each absent key comes from the store. */
export const FeedSettings = z.strictObject({
  target_countries: z.array(CountryCode).min(1).max(250).optional(),
  store_country: CountryCode.optional(),
  seller_name: text(70, { min: 1 }).optional(),
});
export type FeedSettingsInput = z.infer<typeof FeedSettings>;
export const FEED_STATUSES = ['active', 'inactive', 'processing'] as const;
export const FeedStatus = z.enum(FEED_STATUSES);

/** Most product ids one feed may list (a 1 MiB body holds about this many long SKUs). */
export const MAX_FEED_PRODUCTS = 10_000;

const FeedName = text(150, { min: 1 });

export const ProductIds = z
  .array(z.string().regex(CLIENT_ID_PATTERN, 'must be a product id'))
  .min(1)
  .max(MAX_FEED_PRODUCTS);

export const FeedFilters = z.strictObject({
  category: Category.optional(),
  status: ProductStatus.optional(),
});

export const FeedCreate = z.strictObject({
  name: FeedName,
  format: FeedFormat,
  profile: FeedProfileName.optional(),
  compression: FeedCompression.nullable().optional(),
  settings: FeedSettings.optional(),
  delivery: FeedDelivery.optional(),
  credentials: FeedCredentials.optional(),
  products: ProductIds.optional(),
  filters: FeedFilters.optional(),
});
export type FeedCreateInput = z.infer<typeof FeedCreate>;

export const FeedUpdate = z.strictObject({
  name: FeedName.optional(),
  format: FeedFormat.optional(),
  profile: FeedProfileName.optional(),
  compression: FeedCompression.nullable().optional(),
  settings: FeedSettings.nullable().optional(),
  delivery: FeedDelivery.nullable().optional(),
  credentials: FeedCredentials.nullable().optional(),
  products: ProductIds.nullable().optional(),
  filters: FeedFilters.nullable().optional(),
  status: z.enum(['active', 'inactive']).optional(),
});
export type FeedUpdateInput = z.infer<typeof FeedUpdate>;

export const FeedListQuery = z.strictObject({
  format: FeedFormat.optional(),
  profile: FeedProfileName.optional(),
  status: FeedStatus.optional(),
  ...pageFields,
});
export type FeedListQuery = z.infer<typeof FeedListQuery>;

export const IssueSeverity = z.enum(['error', 'warning']);

export const FeedIssueCount = z.object({
  code: z.string(),
  field: z.string(),
  problem: z.enum(['missing', 'invalid', 'too_long']),
  severity: IssueSeverity,
  message: z.string(),
  count: z.int(),
});

export const FeedDiagnostics = z.object({
  generated_at: z.string(),
  products: z.int(),
  products_with_errors: z.int(),
  products_with_warnings: z.int(),
  /** Products left out because the profile's platform would refuse them. */
  excluded: z.int(),
  issues: z.array(FeedIssueCount),
  url: z.string(),
});
export type FeedDiagnostics = z.infer<typeof FeedDiagnostics>;

const feedSummaryFields = {
  id: z.string(),
  name: z.string(),
  profile: FeedProfileName,
  format: FeedFormat,
  compression: FeedCompression.nullable(),
  status: FeedStatus,
  url: z.string(),
  last_updated: z.string().nullable(),
  product_count: z.int(),
};

export const FeedListEntry = z.object(feedSummaryFields);
export type FeedListEntry = z.infer<typeof FeedListEntry>;

export const Feed = z.object({
  ...feedSummaryFields,
  products: z.array(z.string()).nullable(),
  filters: z.object({ category: z.string().optional(), status: ProductStatus.optional() }),
  settings: z.object({
    target_countries: z.array(z.string()).optional(),
    store_country: z.string().optional(),
    seller_name: z.string().optional(),
  }),
  delivery: FeedDelivery,
  credentials_set: z.boolean(),
  estimated_completion: z.string().nullable(),
  generated_at: z.string().nullable(),
  last_error: z.object({ message: z.string(), occurred_at: z.string() }).nullable(),
  diagnostics: FeedDiagnostics.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Feed = z.infer<typeof Feed>;

export const FeedList = z.object({ feeds: z.array(FeedListEntry), pagination: Pagination });

/** One reason products are excluded (or warned about), with up to 20 of their ids. */
export const FeedPreviewReason = z.object({
  code: z.string(),
  field: z.string(),
  problem: z.enum(['missing', 'invalid', 'too_long']),
  message: z.string(),
  count: z.int(),
  product_ids: z.array(z.string()),
});

/** What the next generation of a feed would hold, computed without writing or sending. */
export const FeedPreview = z.object({
  feed_id: z.string(),
  profile: FeedProfileName,
  format: FeedFormat,
  products: z.int(),
  included: z.int(),
  excluded: z.int(),
  records: z.int(),
  excluded_by_reason: z.array(FeedPreviewReason),
  warnings: z.array(FeedPreviewReason),
  invalid_by_field: z.record(z.string(), z.record(z.string(), z.int())),
});
export type FeedPreview = z.infer<typeof FeedPreview>;
