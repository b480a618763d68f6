import { z } from 'zod';
import { CLIENT_ID_PATTERN, text } from '../fields.js';
import { Category, Pagination, ProductStatus } from '../products/schemas.js';

export const FEED_FORMATS = ['json', 'csv', 'xml'] as const;
export const FeedFormat = z.enum(FEED_FORMATS);
export const FEED_STATUSES = ['active', 'inactive', 'processing'] as const;
export const FeedStatus = z.enum(FEED_STATUSES);

/** Most product ids one feed may list (a 1 MiB body holds about this many long SKUs). */
export const MAX_FEED_PRODUCTS = 10_000;

const FeedName = text(150, { min: 1 });

const ProductIds = z
  .array(z.string().regex(CLIENT_ID_PATTERN, 'must be a product id'))
  .min(1)
  .max(MAX_FEED_PRODUCTS)
  .meta({
    description:
      'Product ids the feed carries (duplicates are ignored); absent means every product',
  });

export const FeedFilters = z
  .strictObject({
    category: Category.optional().meta({
      description: 'A category and everything below it ("Apparel" matches "Apparel > Shoes")',
    }),
    status: ProductStatus.optional().meta({
      description: 'Product status to include; absent means active products only',
    }),
  })
  .meta({ description: 'Narrows the products; both keys optional' });

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
  products: ProductIds.nullable()
    .optional()
    .meta({ description: 'Replaces the product list; null removes it (every product)' }),
  filters: FeedFilters.nullable()
    .optional()
    .meta({ description: 'Replaces the filters whole; null or {} removes them' }),
  status: z
    .enum(['active', 'inactive'])
    .optional()
    .meta({ description: 'inactive stops publishing (export answers 404); active regenerates' }),
});
export type FeedUpdateInput = z.infer<typeof FeedUpdate>;

export const FeedListQuery = z.strictObject({
  format: FeedFormat.optional(),
  status: FeedStatus.optional(),
  limit: z.coerce.number<string>().int().min(1).max(250).default(50),
  offset: z.coerce.number<string>().int().min(0).max(1_000_000_000).default(0),
});
export type FeedListQuery = z.infer<typeof FeedListQuery>;

export const IssueSeverity = z.enum(['error', 'warning']);

export const FeedDiagnostics = z
  .object({
    generated_at: z.string(),
    products: z.int().meta({ description: 'Products in the run' }),
    products_with_errors: z.int().meta({ description: 'Products with at least one error' }),
    products_with_warnings: z.int().meta({ description: 'Products with at least one warning' }),
    issues: z.array(
      z.object({
        code: z.string().meta({ description: 'field.problem, e.g. image_link.missing' }),
        field: z.string(),
        problem: z.enum(['missing', 'invalid', 'too_long']),
        severity: IssueSeverity,
        message: z.string(),
        count: z.int(),
      }),
    ),
    url: z.string().meta({ description: 'The per-product list (NDJSON)' }),
  })
  .meta({ description: 'What the last run found missing or invalid, summed per issue' });
export type FeedDiagnostics = z.infer<typeof FeedDiagnostics>;

const feedSummaryFields = {
  id: z.string(),
  name: z.string(),
  format: FeedFormat,
  status: FeedStatus,
  url: z.string().meta({ description: 'The export address: {base_url}/v1/feeds/<id>/export' }),
  last_updated: z
    .string()
    .nullable()
    .meta({ description: 'When the published content last changed; null before generation' }),
  product_count: z.int().meta({ description: 'Products in the published file' }),
};

export const FeedListEntry = z.object(feedSummaryFields).meta({ description: 'A feed in a list' });
export type FeedListEntry = z.infer<typeof FeedListEntry>;

export const Feed = z
  .object({
    ...feedSummaryFields,
    products: z.array(z.string()).nullable(),
    filters: z.object({ category: z.string().optional(), status: ProductStatus.optional() }),
    estimated_completion: z
      .string()
      .nullable()
      .meta({ description: 'While processing: when the files should be published' }),
    generated_at: z
      .string()
      .nullable()
      .meta({ description: 'When a run last finished this feed, changed or not' }),
    last_error: z
      .object({ message: z.string(), occurred_at: z.string() })
      .nullable()
      .meta({ description: 'Why the last generation failed (the feed was set inactive)' }),
    diagnostics: FeedDiagnostics.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ description: 'A feed as the API returns it' });
export type Feed = z.infer<typeof Feed>;

export const FeedList = z.object({ feeds: z.array(FeedListEntry), pagination: Pagination });
