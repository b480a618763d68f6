import { feedSource } from './feed.js';
import { shopifySource } from './shopify.js';
import { woocommerceSource } from './woocommerce.js';
import type { SourceRegistry } from '../domain/integrations/runtime.js';

/** The platform sources this build knows. */
export const platformSources: SourceRegistry = {
  feed: feedSource,
  shopify: shopifySource,
  woocommerce: woocommerceSource,
};
