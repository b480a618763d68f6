import {
  Feed,
  FeedDiagnostics,
  FeedFilters,
  FeedIssueCount,
  FeedListEntry,
  FeedListQuery,
  FeedPreview,
  FeedPreviewReason,
  FeedSettings,
  FeedUpdate,
  ProductIds,
} from '../../domain/feeds/schemas.js';
import { FeedDeliveryStatusName } from '../../domain/feeds/delivery-schemas.js';
import { z } from 'zod';
import { pageFields } from '../../domain/pagination.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** A feed's deliveries: a page, of one state or all. */
export const FeedDeliveryListQuery = z
  .strictObject({ status: FeedDeliveryStatusName.optional(), ...pageFields })
  .extend(pageQuery);

/** The feed list's query string: the domain's filter, with numbers read from text. */
export const FeedListQueryString = FeedListQuery.extend(pageQuery);

doc(
  ProductIds,
  'Product ids the feed carries (duplicates are ignored); absent means every product',
);
docFields(
  FeedFilters,
  {
    category: 'A category and everything below it ("Apparel" matches "Apparel > Shoes")',
    status: 'Product status to include; absent means active products only',
  },
  'Narrows the products; both keys optional',
);
docFields(FeedUpdate, {
  profile: 'Another profile; the format must be one it takes (422 naming format)',
  compression: 'gzip, where the profile takes it; null removes it',
  settings: 'Replaces the channel settings whole; null or {} removes them',
  products: 'Replaces the product list; null removes it (every product)',
  filters: 'Replaces the filters whole; null or {} removes them',
  status: 'inactive stops publishing (export answers 404); active regenerates',
});
docFields(FeedIssueCount, { code: 'field.problem, e.g. image_link.missing' });
docFields(
  FeedDiagnostics,
  {
    products: 'Products in the run',
    products_with_errors: 'Products with at least one error',
    products_with_warnings: 'Products with at least one warning',
    url: 'The per-product list (NDJSON)',
  },
  {
    id: 'FeedDiagnostics',
    description: 'What the last run found missing or invalid, summed per issue',
  },
);
docFields(
  FeedListEntry,
  {
    url: 'The export address: {base_url}/v1/feeds/<id>/export',
    last_updated: 'When the published content last changed; null before generation',
    product_count: 'Products in the published file',
  },
  { id: 'FeedListEntry', description: 'A feed in a list' },
);
docFields(
  Feed,
  {
    estimated_completion: 'While processing: when the files should be published',
    generated_at: 'When a run last finished this feed, changed or not',
    last_error: 'Why the last generation failed (the feed was set inactive)',
  },
  { id: 'Feed', description: 'A feed as the API returns it' },
);
docFields(
  FeedSettings,
  {
    target_countries:
      'ISO 3166-1 alpha-2 codes the products are offered in; default [store_country]',
    store_country: "The store's country (ISO 3166-1 alpha-2); default STORE_COUNTRY",
    seller_name: 'The seller the channel shows; default STORE_NAME',
  },
  {
    id: 'FeedSettings',
    description: "A feed's channel settings (openai, google, acp, stripe profiles)",
  },
);
docFields(
  FeedPreviewReason,
  {
    code: 'field.problem, e.g. image_url.missing',
    count: 'Products with it',
    product_ids: 'Up to 20 of them',
  },
  { id: 'FeedPreviewReason', description: 'One reason, with its products' },
);
docFields(
  FeedPreview,
  {
    products: 'Products the feed selects',
    included: 'Products the file would carry',
    excluded: 'Products left out: their platform would refuse them',
    records: 'Records the file would hold (acp: one per variant group)',
    excluded_by_reason: 'Excluded products by their first error',
    warnings: 'Issues of the included products (published as found)',
    invalid_by_field: 'Every issue found, products per field and problem',
  },
  {
    id: 'FeedPreview',
    description: "What a feed's next generation would contain, computed without writing or sending",
  },
);
