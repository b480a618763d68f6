import type { Migration } from 'kysely/migration';
import * as m20261121000000 from './20261121000000_initial.js';
import * as m20261121010000 from './20261121010000_limits_and_audit.js';
import * as m20261121040000 from './20261121040000_discovery.js';
import * as m20261121020000 from './20261121020000_webhooks.js';
import * as m20261121030000 from './20261121030000_feeds.js';
import * as m20261121050000 from './20261121050000_category_counts.js';
import * as m20261125020000 from './20261125020000_analytics.js';
import * as m20261125030000 from './20261125030000_reports.js';
import * as m20261125010000 from './20261125010000_integrations.js';
import * as m20261126010000 from './20261126010000_several_processes.js';
import * as m20261126000000 from './20261126000000_key_change_notify.js';
import * as m20261126020000 from './20261126020000_change_versions.js';
import * as m20261127000000 from './20261127000000_sync_staging.js';
import * as m20261127060000 from './20261127060000_product_search.js';
import * as m20261127060500 from './20261127060500_publications.js';
import * as m20261127061500 from './20261127061500_analytics_searches.js';
import * as m20261127063000 from './20261127063000_feed_profiles.js';
import * as m20261127064500 from './20261127064500_feed_deliveries.js';
import * as m20261127090330 from './20261127090330_feed_delivery_leases.js';
import * as m20261127092500 from './20261127092500_product_search_vector.js';
import * as m20261127093000 from './20261127093000_counter_deltas.js';
import * as m20261127095000 from './20261127095000_product_search_groups.js';
import * as m20261127200000 from './20261127200000_products_brand_order.js';
import * as m20261128010000 from './20261128010000_products_group_order.js';
import * as m20261128020000 from './20261128020000_product_search_automerge.js';
import * as m20261128100000 from './20261128100000_workers.js';

/**
 * Every migration, by timestamped name. New migrations get a new file and a line here;
 * landed ones are never edited.
 */
export const migrations: Record<string, Migration> = {
  '20261121000000_initial': m20261121000000,
  '20261121010000_limits_and_audit': m20261121010000,
  '20261121040000_discovery': m20261121040000,
  '20261121020000_webhooks': m20261121020000,
  '20261121030000_feeds': m20261121030000,
  '20261121050000_category_counts': m20261121050000,
  '20261125020000_analytics': m20261125020000,
  '20261125030000_reports': m20261125030000,
  '20261125010000_integrations': m20261125010000,
  '20261126010000_several_processes': m20261126010000,
  '20261126000000_key_change_notify': m20261126000000,
  '20261126020000_change_versions': m20261126020000,
  '20261127000000_sync_staging': m20261127000000,
  '20261127060000_product_search': m20261127060000,
  '20261127060500_publications': m20261127060500,
  '20261127061500_analytics_searches': m20261127061500,
  '20261127063000_feed_profiles': m20261127063000,
  '20261127064500_feed_deliveries': m20261127064500,
  '20261127090330_feed_delivery_leases': m20261127090330,
  '20261127092500_product_search_vector': m20261127092500,
  '20261127093000_counter_deltas': m20261127093000,
  '20261127095000_product_search_groups': m20261127095000,
  '20261127200000_products_brand_order': m20261127200000,
  '20261128010000_products_group_order': m20261128010000,
  '20261128020000_product_search_automerge': m20261128020000,
  '20261128100000_workers': m20261128100000,
};
