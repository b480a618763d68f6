import type { DeliveryTransport, RemoteReader } from '../domain/feeds/deliveries.js';
import { sendBySftp } from './sftp.js';
import { sendToAcpFeedApi } from './acp-feed-api.js';
import { readStripeImport, sendToStripe } from './stripe-catalog.js';
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

/** The push deliveries of feeds, by delivery type (domain/feeds/deliveries.ts). */
export const deliveryTransports: Readonly<Record<string, DeliveryTransport>> = {
  sftp: sendBySftp,
  acp_feed_api: sendToAcpFeedApi,
  stripe: sendToStripe,
};

/** The deliveries whose remote result can be read again after the fact, by delivery type. */
export const deliveryRemoteReaders: Readonly<Record<string, RemoteReader>> = {
  stripe: readStripeImport,
};
