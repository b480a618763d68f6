import {
  Credentials,
  Integration,
  IntegrationCreate,
  IntegrationListQuery,
  IntegrationTestResult,
  IntegrationUpdate,
  Settings,
  ShopDomain,
  SyncError,
  SyncHistoryQuery,
  SyncRun,
  SyncStatus,
} from '../../domain/integrations/schemas.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** The query strings of the integration list and the sync history, numbers read from text. */
export const IntegrationListQueryString = IntegrationListQuery.extend(pageQuery);
export const SyncHistoryQueryString = SyncHistoryQuery.extend(pageQuery);

doc(
  ShopDomain,
  "The store's host name (example.myshopify.com, shop.example.com); for a feed, defaults to the feed URL's host. Private, loopback and link-local addresses are refused unless ALLOW_PRIVATE_TARGETS=true",
);
doc(
  Credentials,
  'Secrets, encrypted at rest and never returned. shopify: access_token, or client_id and client_secret (client-credentials grant); woocommerce: consumer_key and consumer_secret; any platform: webhook_secret (verifies inbound webhooks)',
);
doc(
  Settings,
  'Platform settings: url (feed URL, required for platform feed), bulk_threshold (Shopify), ...',
);
docFields(IntegrationCreate, { platform: 'shopify, woocommerce or feed' });
docFields(IntegrationUpdate, {
  credentials: 'Replaces the credentials whole; null removes them',
  settings: 'Replaces the settings whole',
  status: 'disconnected pauses scheduled syncs; connected resumes them',
});
docFields(
  Integration,
  {
    status:
      'connected; disconnected (paused by you); error (the platform refused the credentials or a test failed: see last_error)',
    credentials_set: 'Whether credentials are stored (they are never returned)',
    last_sync: 'When the last successful sync finished',
    product_count:
      'Products this integration keeps in step (not counting those gone from the platform)',
    sync_status: 'running while a sync of this integration runs',
  },
  { id: 'Integration', description: 'A connected store platform or product feed' },
);
docFields(
  IntegrationTestResult,
  { message: 'What was checked, or what went wrong' },
  { id: 'IntegrationTestResult', description: 'The outcome of a connection test' },
);
doc(SyncError, {
  id: 'SyncError',
  description: "An item that could not become a product: the platform's id, our field, the reason",
});
docFields(
  SyncRun,
  {
    fetched: 'Items read from the platform',
    unchanged: 'Items whose product was already up to date (nothing written)',
    deactivated: 'Products made inactive because their item is gone from the platform',
    failed: 'Items that could not become products',
    errors: 'The first 100 item errors',
    error: 'Why the run failed',
    trigger: 'api, cli, schedule or start',
  },
  { id: 'SyncRun', description: 'One sync run of an integration' },
);
docFields(SyncStatus, {
  current: 'The run under way, if any',
  last: 'The last finished run, if any',
});
