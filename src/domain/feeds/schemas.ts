import { z } from 'zod';
import { CLIENT_ID_PATTERN, text } from '../fields.js';
import { pageFields } from '../pagination.js';
import { Category, Pagination, ProductStatus } from '../products/schemas.js';

export const FEED_FORMATS = ['json', 'csv', 'xml'] as const;
export const FeedFormat = z.enum(FEED_FORMATS);
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
  products: ProductIds.optional(),
  filters: FeedFilters.optional(),
});
export type FeedCreateInput = z.infer<typeof FeedCreate>;

export const FeedUpdate = z.strictObject({
  name: FeedName.optional(),
  format: FeedFormat.optional(),
  products: ProductIds.nullable().optional(),
  filters: FeedFilters.nullable().optional(),
  status: z.enum(['active', 'inactive']).optional(),
});
export type FeedUpdateInput = z.infer<typeof FeedUpdate>;

export const FeedListQuery = z.strictObject({
  format: FeedFormat.optional(),
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
  issues: z.array(FeedIssueCount),
  url: z.string(),
});
export type FeedDiagnostics = z.infer<typeof FeedDiagnostics>;

const feedSummaryFields = {
  id: z.string(),
  name: z.string(),
  format: FeedFormat,
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
  estimated_completion: z.string().nullable(),
  generated_at: z.string().nullable(),
  last_error: z.object({ message: z.string(), occurred_at: z.string() }).nullable(),
  diagnostics: FeedDiagnostics.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Feed = z.infer<typeof Feed>;

export const FeedList = z.object({ feeds: z.array(FeedListEntry), pagination: Pagination });
