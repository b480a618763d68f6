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
  SyncRequest,
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
  "Platform settings, checked on create and update (an unknown key or a bad value is 422 naming settings.<key>). Any platform: max_drop (0..1, default 0.2: a sync that would make more than this share of active products inactive is held), timeout_s (a sync's total deadline, 1..86400, default 600). feed: url (required; a user:password in it moves into the credentials), max_bytes, format (csv, tsv, json, ndjson, xml), timeout_ms. shopify: api_version, bulk_threshold, bulk_poll_seconds, currency, scheme. woocommerce: currency, scheme",
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
    status:
      'running; succeeded; failed (nothing was applied); held (nothing was applied: the run read no item, or would have made more than settings.max_drop of the active products inactive; the counts say what it would have done)',
    error: 'Why the run failed or was held',
    trigger: 'api, cli, schedule or start; "(force)" after it for a forced run',
  },
  { id: 'SyncRun', description: 'One sync run of an integration' },
);
docFields(SyncRequest, {
  force:
    'true: apply the run even when the hold checks would hold it (no item read, more than max_drop made inactive); a failure still applies nothing',
});
docFields(SyncStatus, {
  current: 'The run under way, if any',
  last: 'The last finished run, if any',
});
