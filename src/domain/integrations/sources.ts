import { feedSource } from './platforms/feed.js';
import { shopifySource } from './platforms/shopify.js';
import { woocommerceSource } from './platforms/woocommerce.js';
import type { SourceRegistry } from './runtime.js';

/** The platform sources this build knows. */
export const platformSources: SourceRegistry = {
  feed: feedSource,
  shopify: shopifySource,
  woocommerce: woocommerceSource,
};
