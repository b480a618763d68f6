import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Timestamps are ISO 8601 UTC strings with milliseconds and a `Z`, so they sort as text. */
export type Timestamp = string;

export type ProductStatus = 'active' | 'inactive' | 'draft';
export type KeyLevel = 'read_only' | 'read_write' | 'admin';

export interface ProductTable {
  id: string;
  name: string;
  description: string | null;
  price_minor: number;
  currency: string;
  status: ProductStatus;
  category: string | null;
  /** JSON array of image URLs. */
  images: string;
  /** JSON object: brand, features and the other known and free keys. */
  attributes: string;
  /** attributes.brand, kept in a column so the pipeline can order and group by brand. */
  brand: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Product totals per status, kept in the same transaction as each change (COUNT(*) is O(n)). */
export interface ProductCountTable {
  status: ProductStatus;
  count: number;
}

/**
 * What one writer (a PostgreSQL backend: `writer` is its pid) added to a product_counts row
 * since the last fold: a count is its base row plus these (migration 20261127093000).
 */
export interface ProductCountDeltaTable {
  status: ProductStatus;
  writer: number;
  count: number;
}

/** The same for category_counts, written by the PostgreSQL trigger on products. */
export interface CategoryCountDeltaTable {
  category: string;
  status: ProductStatus;
  writer: number;
  count: number;
}

/** Products per (category, status), kept by triggers on products. */
export interface CategoryCountTable {
  category: string;
  status: ProductStatus;
  count: number;
}

/** The outbox: every change records its events here, in the change's own transaction. */
export interface EventTable {
  seq: Generated<number>;
  id: string;
  type: string;
  /** JSON: the record as the API returns it. */
  data: string;
  created_at: Timestamp;
}

export interface ApiKeyTable {
  id: string;
  name: string | null;
  level: KeyLevel;
  environment: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  /** `ask_live_`, `ask_test_` or `ask_stg_`. */
  key_prefix: string;
  last4: string;
  plan: string;
  rpm: number | null;
  burst: number | null;
  monthly: number | null;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface IdempotencyKeyTable {
  api_key_id: string;
  key: string;
  /** SHA-256 of method, path and raw body. */
  fingerprint: string;
  /** null while the first request is still being handled. */
  status_code: number | null;
  response_body: string | null;
  created_at: Timestamp;
}

/** Requests counted against a key's monthly quota, per calendar month (UTC). */
export interface ApiKeyUsageTable {
  api_key_id: string;
  /** `YYYY-MM`, UTC. */
  month: string;
  requests: number;
}

/**
 * A key's burst, minute and month windows when the limits live in the store
 * (RATE_LIMIT_STORE=database): every process decides against the same row.
 */
export interface RateLimitWindowTable {
  api_key_id: string;
  burst_start_ms: number;
  burst_count: number;
  minute_start_ms: number;
  minute_count: number;
  /** `YYYY-MM`, UTC: the month month_count counts. */
  month: string;
  month_count: number;
  /** 1 when the last request was let through (and counted), 0 when it was refused. */
  last_allowed: number;
}

/** One row per authenticated request (CONTRACT part 5), written in batches. */
export interface AuditLogTable {
  id: Generated<number>;
  /** When the request arrived. */
  created_at: Timestamp;
  api_key_id: string;
  method: string;
  /** The path without the query string. */
  path: string;
  status: number;
  request_id: string;
  client_ip: string | null;
}

/** A brand of the discovery registry: its stable slug and the state of its last publication. */
export interface DiscoveryBrandTable {
  /** The brand as products carry it (`attributes.brand`); STORE_NAME for products without one. */
  name: string;
  slug: string;
  /** Active products published under this brand; 0 when it is not (or no longer) published. */
  product_count: Generated<number>;
  /** Newest updated_at of the brand's products at its last publication. */
  updated_at: Timestamp | null;
  /** Fingerprint of what else shaped the files (renderer version, URLs, store name). */
  build_key: string | null;
  published_at: Timestamp | null;
  created_at: Timestamp;
}

// --- Webhooks (issue 4) ---

export type WebhookStatus = 'active' | 'disabled';
/** Why an endpoint stopped receiving: a PUT, a 410 answer, or 3 days of failures. */
export type WebhookDisabledReason = 'requested' | 'endpoint_gone' | 'failing';

export interface WebhookTable {
  id: string;
  url: string;
  /** JSON array of event kinds; null means every kind, also kinds added later. */
  events: string | null;
  /** The signing secret. Kept readable: the worker needs it to sign every delivery. */
  secret: string;
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  status: WebhookStatus;
  disabled_reason: WebhookDisabledReason | null;
  disabled_at: Timestamp | null;
  /** Start of the current run of failed attempts; null after any success. */
  failing_since: Timestamp | null;
  /** Outbox position: events up to this seq are queued for this endpoint (or filtered out). */
  event_cursor: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event for one endpoint. Outbox deliveries are sent in seq order per endpoint. */
export interface WebhookDeliveryTable {
  seq: Generated<number>;
  id: string;
  webhook_id: string;
  /** The outbox event; null for a test delivery. */
  event_seq: number | null;
  event_id: string;
  event_type: string;
  /** The exact body of a test delivery; outbox deliveries build theirs from the event. */
  payload: string | null;
  status: DeliveryStatus;
  /** Attempts made; the last one's outcome is the attempt row with this number. */
  attempts: number;
  next_attempt_at: Timestamp | null;
  created_at: Timestamp;
  /** The process sending it now (a random token per worker), or null. */
  lease_owner: Generated<string | null>;
  /** When that process's claim lapses and another may take the delivery over. */
  lease_expires_at: Generated<Timestamp | null>;
}

export type AttemptTrigger = 'schedule' | 'manual' | 'test';

export interface WebhookAttemptTable {
  delivery_seq: number;
  attempt: number;
  trigger: AttemptTrigger;
  started_at: Timestamp;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The first KiB of the receiver's answer, for the delivery log. */
  response_body: string | null;
}

export type FeedFormat = 'json' | 'jsonl' | 'csv' | 'tsv' | 'xml';
export type FeedProfile = 'agentshelf' | 'openai' | 'google' | 'acp' | 'stripe';
export type FeedStatus = 'active' | 'inactive' | 'processing';

export interface FeedTable {
  id: string;
  name: string;
  format: FeedFormat;
  status: FeedStatus;
  /** The record shape and validation (CONTRACT part 10); `agentshelf` is today's columns. */
  profile: ColumnType<FeedProfile, FeedProfile | undefined, FeedProfile>;
  /** `gzip`: the published file is the gzipped one; null: as written. */
  compression: 'gzip' | null;
  /** JSON: the channel settings (target_countries, store_country, seller_name); null: none. */
  settings: string | null;
  /** JSON: where the file goes (domain/feeds/delivery-schemas.ts); null: hosted. */
  delivery: ColumnType<string | null, string | null | undefined, string | null>;
  /** The delivery's credentials, encrypted (integrations' SecretBox); null: none. */
  credentials: ColumnType<string | null, string | null | undefined, string | null>;
  /** filters.category: the category and everything below it. */
  filter_category: string | null;
  /** filters.status; null means active products only. */
  filter_status: ProductStatus | null;
  /** 1 when the feed lists its products (feed_products); 0 means every product. */
  has_product_list: ColumnType<number, number | undefined, number>;
  /** Bumped by every change through the API, so a run can tell it built an older definition. */
  revision: ColumnType<number, number | undefined, number>;
  estimated_completion: Timestamp | null;
  /** Format of the file now published under DATA_DIR/feeds; null before the first generation. */
  published_format: FeedFormat | null;
  /** Hex SHA-256 of the published file. */
  sha256: string | null;
  /** Products in the published file. */
  product_count: ColumnType<number, number | undefined, number>;
  /** When the published content last changed. */
  last_updated: Timestamp | null;
  /** When a run last finished this feed (changed or not). */
  generated_at: Timestamp | null;
  last_run_ms: number | null;
  /** JSON: the diagnostics summary of the last run. */
  diagnostics: string | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  created_at: Timestamp;
  /** When the definition last changed (pipeline runs do not touch it). */
  updated_at: Timestamp;
}

export type FeedDeliveryStatus =
  'pending' | 'delivering' | 'delivered' | 'skipped' | 'held' | 'failed';

export interface FeedDeliveryTable {
  id: string;
  feed_id: string;
  /** The delivery type it went by (sftp, ...). */
  type: string;
  status: FeedDeliveryStatus;
  /** Products in the file. */
  products: number;
  bytes: number;
  /** Hex SHA-256 of the feed's content. */
  sha256: string;
  /** DATA_DIR/deliveries/<file>: the file to send, a hard link kept until the row ends. */
  file: string | null;
  /** Why it was skipped or held. */
  reason: string | null;
  attempts: number;
  /** When a failed attempt is tried again; null: not to be tried. */
  next_attempt_at: Timestamp | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  error: string | null;
  /** JSON: what the remote answered. */
  remote: string | null;
  /** The runner sending it (`host/pid/random`) while `delivering`. */
  claimed_by: string | null;
  /** When that runner's lease lapses (renewed while it sends): then another retakes it. */
  claimed_until: Timestamp | null;
  created_at: Timestamp;
}

export interface FeedProductTable {
  feed_id: string;
  product_id: string;
}

export type PipelineRunStatus = 'running' | 'succeeded' | 'failed' | 'aborted' | 'interrupted';

/** One row per pipeline run, written while the run holds the pipeline lock. */
export interface PipelineRunTable {
  id: Generated<number>;
  /** What started it: build, cron, start, products changed, feeds changed. */
  trigger: string;
  status: PipelineRunStatus;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** What the run read: product events, product totals and feed definitions (staleness). */
  catalogue_version: string;
  /** Hash of the settings that shape the output (staleness after a configuration change). */
  settings_hash: string;
  /** JSON: the stages' results. */
  summary: string | null;
  error: string | null;
  pid: number;
  hostname: string;
}

export type PublicationStatus = 'running' | 'succeeded' | 'failed' | 'interrupted';
export type PurgeStatus = 'pending' | 'succeeded' | 'failed';

/** One upload of the published tree to PUBLISH_TARGET, and its CDN purge (CONTRACT part 12). */
export interface PublicationTable {
  id: string;
  /** The bucket, prefix and endpoint (no credential). */
  target: string;
  /** pipeline or publish (the CLI). */
  trigger: string;
  status: PublicationStatus;
  uploaded: number;
  skipped: number;
  deleted: number;
  /** Deletions due but held (over PUBLISH_MAX_DELETES without --force). */
  held: number;
  bytes: number;
  error: string | null;
  /** Null when no purge was asked (no CDN_PURGE, or nothing changed). */
  purge_status: PurgeStatus | null;
  /** JSON array of the URLs to purge, kept until the purge succeeds. */
  purge_urls: string | null;
  purge_attempts: number;
  purge_next_at: Timestamp | null;
  purge_error: string | null;
  pid: number;
  started_at: Timestamp;
  finished_at: Timestamp | null;
}

/** The single row that keeps two pipeline runs from overlapping, also across processes. */
export interface PipelineLockTable {
  name: string;
  /** Random token of the holder; null when free. */
  holder: string | null;
  pid: number | null;
  hostname: string | null;
  acquired_at: Timestamp | null;
  /** Wall-clock milliseconds of the holder's last heartbeat. */
  heartbeat_ms: number | null;
}

/** Runs waiting for the pipeline lock, served in ticket order so no waiter starves. */
export interface PipelineLockWaiterTable {
  ticket: Generated<number>;
  token: string;
  pid: number;
  hostname: string;
  heartbeat_ms: number;
}

export type ReportType = 'analytics' | 'products' | 'feed_diagnostics';
export type ReportFormat = 'csv' | 'json' | 'html';
export type ReportStatus = 'pending' | 'ready' | 'failed';

/** A generated report (CONTRACT part 9): its file lives in DATA_DIR/reports/<id>.<format>. */
export interface ReportTable {
  id: string;
  type: ReportType;
  format: ReportFormat;
  status: ReportStatus;
  /** Why generation failed (status failed). */
  failure_reason: string | null;
  /** The period, UTC days YYYY-MM-DD; null for reports of the current state (feed_diagnostics). */
  start_date: string | null;
  end_date: string | null;
  /** The name a download gets (Content-Disposition). */
  file_name: string;
  /** Size of the file once ready. */
  bytes: number | null;
  content_type: string;
  /** Generations started: a process killed mid-way leaves started_at set and attempts counted. */
  attempts: number;
  started_at: string | null;
  created_at: string;
  finished_at: string | null;
}

/** A live `serve` process (its heartbeat), for sharing work between processes. */
export interface WorkerTable {
  /** `host/pid/random`, the process's owner token. */
  id: string;
  started_at: Timestamp;
  beat_at: Timestamp;
  /** Counted alive until then; moved on by each heartbeat. */
  expires_at: Timestamp;
}

export interface Database {
  products: ProductTable;
  product_counts: ProductCountTable;
  category_counts: CategoryCountTable;
  product_count_deltas: ProductCountDeltaTable;
  category_count_deltas: CategoryCountDeltaTable;
  events: EventTable;
  api_keys: ApiKeyTable;
  idempotency_keys: IdempotencyKeyTable;
  api_key_usage: ApiKeyUsageTable;
  rate_limit_windows: RateLimitWindowTable;
  audit_log: AuditLogTable;
  discovery_brands: DiscoveryBrandTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  feeds: FeedTable;
  feed_products: FeedProductTable;
  feed_deliveries: FeedDeliveryTable;
  pipeline_runs: PipelineRunTable;
  publications: PublicationTable;
  pipeline_lock: PipelineLockTable;
  pipeline_lock_waiters: PipelineLockWaiterTable;
  interactions: InteractionTable;
  analytics_daily_traffic: AnalyticsDailyTrafficTable;
  analytics_daily_agents: AnalyticsDailyAgentTable;
  analytics_daily_brands: AnalyticsDailyBrandTable;
  analytics_daily_products: AnalyticsDailyProductTable;
  analytics_daily_revenue: AnalyticsDailyRevenueTable;
  analytics_daily_searches: AnalyticsDailySearchTable;
  change_versions: ChangeVersionTable;
  reports: ReportTable;
  integrations: IntegrationTable;
  integration_products: IntegrationProductTable;
  sync_runs: SyncRunTable;
  sync_staged_items: SyncStagedItemTable;
  integration_webhook_receipts: IntegrationWebhookReceiptTable;
  workers: WorkerTable;
}

export type ProductRow = Selectable<ProductTable>;
export type NewProductRow = Insertable<ProductTable>;
export type ProductRowUpdate = Updateable<ProductTable>;
export type EventRow = Selectable<EventTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type NewApiKeyRow = Insertable<ApiKeyTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>;
export type NewIdempotencyKeyRow = Insertable<IdempotencyKeyTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type NewAuditLogRow = Insertable<AuditLogTable>;
export type DiscoveryBrandRow = Selectable<DiscoveryBrandTable>;
export type WebhookRow = Selectable<WebhookTable>;
export type NewWebhookRow = Insertable<WebhookTable>;
export type WebhookRowUpdate = Updateable<WebhookTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>;
export type NewWebhookDeliveryRow = Insertable<WebhookDeliveryTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptTable>;
export type FeedRow = Selectable<FeedTable>;
export type NewFeedRow = Insertable<FeedTable>;
export type FeedRowUpdate = Updateable<FeedTable>;
export type FeedDeliveryRow = Selectable<FeedDeliveryTable>;
export type FeedDeliveryRowUpdate = Updateable<FeedDeliveryTable>;
export type PipelineRunRow = Selectable<PipelineRunTable>;
export type ReportRow = Selectable<ReportTable>;
export type ReportRowUpdate = Updateable<ReportTable>;
export type PublicationRow = Selectable<PublicationTable>;
export type PublicationRowUpdate = Updateable<PublicationTable>;

// --- Analytics (issue 13) ---

export type InteractionSource =
  'server' | 'export' | 'event' | 'nginx' | 'cloudflare' | 'cloudfront';
export type InteractionKind = 'assistant' | 'search' | 'training' | 'agent' | 'bot' | 'human';
export type AnalyticsEventType = 'view' | 'click' | 'conversion';

/**
 * One interaction, append-only: a request served (discovery server, feed export), a CDN log
 * line imported, or an event posted. Purged after ANALYTICS_RETENTION_DAYS; the rollups stay.
 */
export interface InteractionTable {
  id: Generated<number>;
  at: Timestamp;
  source: InteractionSource;
  method: string | null;
  path: string | null;
  /** The brand slug the path names, if any. */
  brand: string | null;
  product_id: string | null;
  status: number | null;
  bytes: number | null;
  user_agent: string | null;
  /** The agent's name (GPTBot), the bot isbot matched, or null for people. */
  agent: string | null;
  operator: string | null;
  kind: InteractionKind;
  /** 1 when a Signature-Agent signature was verified. */
  verified: ColumnType<number, number | undefined, number>;
  event_type: AnalyticsEventType | null;
  amount_minor: number | null;
  currency: string | null;
  /** CDN request id, hash of a log line, or `event:<id>`: a second copy is not stored. */
  dedupe_key: string | null;
}

/** Interactions (conversions aside) per day x source x brand x agent; '' stands for none. */
export interface AnalyticsDailyTrafficTable {
  day: string;
  source: InteractionSource;
  brand: string;
  agent: string;
  operator: string;
  kind: InteractionKind;
  interactions: number;
  /** Answered 2xx or 304: the page or feed reached the agent. */
  fetched: number;
  verified: number;
  bytes: number;
}

/** The traffic rollup without the brand: what the daily series and agent breakdown read. */
export type AnalyticsDailyAgentTable = Omit<AnalyticsDailyTrafficTable, 'brand'>;

/** UCP catalog searches per day x query (lower-cased, spaces collapsed). */
export interface AnalyticsDailySearchTable {
  day: string;
  query: string;
  searches: number;
  /** Searches of the query that found nothing. */
  no_results: number;
}

/** AI interactions per day x brand slug; fetched = answered 2xx or 304 (discovery). */
export interface AnalyticsDailyBrandTable {
  day: string;
  brand: string;
  interactions: number;
  fetched: number;
}

/** What AI agents did with one product on one day. */
export interface AnalyticsDailyProductTable {
  day: string;
  product_id: string;
  /** AI interactions naming the product (views, clicks, requests), by kind below. */
  interactions: number;
  assistant: number;
  search: number;
  training: number;
  agent: number;
  views: number;
  clicks: number;
  /** Conversions in any currency. */
  conversions: number;
  /** Conversion amounts in DEFAULT_CURRENCY, minor units. */
  revenue_minor: number;
}

/** Conversions and their amounts per day x currency x product. */
export interface AnalyticsDailyRevenueTable {
  day: string;
  currency: string;
  product_id: string;
  conversions: number;
  amount_minor: number;
}

/** A counter bumped by every transaction that changes what `name` names (answer caches). */
export interface ChangeVersionTable {
  name: string;
  version: number;
}

export type InteractionRow = Selectable<InteractionTable>;
export type NewInteractionRow = Insertable<InteractionTable>;

// Keep ColumnType referenced for tables added later that need distinct select/insert types.
export type _ColumnType<S, I, U> = ColumnType<S, I, U>;

// --- Integrations (issue 12) ---

export type IntegrationPlatform = 'shopify' | 'woocommerce' | 'feed';
export type IntegrationStatus = 'connected' | 'disconnected' | 'error';

export interface IntegrationTable {
  id: string;
  platform: IntegrationPlatform;
  shop_domain: string;
  status: IntegrationStatus;
  /** JSON object. */
  settings: string;
  /** AES-256-GCM ciphertext of a JSON object (domain/integrations/secret-box.ts). */
  credentials: string | null;
  /** JSON object: what the platform source kept from its last good run. */
  state: string;
  last_sync_at: Timestamp | null;
  last_error: string | null;
  product_count: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IntegrationProductTable {
  integration_id: string;
  external_id: string;
  group_id: string | null;
  product_id: string;
  fingerprint: string | null;
  updated_at: Timestamp;
}

export type SyncRunStatus = 'running' | 'succeeded' | 'failed' | 'held';

export interface SyncRunTable {
  id: string;
  integration_id: string;
  status: SyncRunStatus;
  trigger: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  duration_ms: number | null;
  fetched: ColumnType<number, number | undefined, number>;
  created: ColumnType<number, number | undefined, number>;
  updated: ColumnType<number, number | undefined, number>;
  unchanged: ColumnType<number, number | undefined, number>;
  deactivated: ColumnType<number, number | undefined, number>;
  failed: ColumnType<number, number | undefined, number>;
  /** JSON array of {external_id, field, reason}, at most 100. */
  errors: string;
  error: string | null;
  owner: string;
  pid: number;
  hostname: string;
  heartbeat_ms: number;
}

/** What a running sync has read, applied at its end (migration 20261127000000). */
export interface SyncStagedItemTable {
  run_id: string;
  seq: number;
  /** An item the source still lists; null for a failed item without an id. */
  external_id: string | null;
  /** The item to write (a SourceItem as JSON); null when nothing needs writing. */
  payload: string | null;
}

export interface IntegrationWebhookReceiptTable {
  integration_id: string;
  webhook_id: string;
  received_at: Timestamp;
}

export type IntegrationRow = Selectable<IntegrationTable>;
export type NewIntegrationRow = Insertable<IntegrationTable>;
export type IntegrationRowUpdate = Updateable<IntegrationTable>;
export type IntegrationProductRow = Selectable<IntegrationProductTable>;
export type SyncRunRow = Selectable<SyncRunTable>;
export type NewSyncRunRow = Insertable<SyncRunTable>;
export type SyncRunRowUpdate = Updateable<SyncRunTable>;
export type SyncStagedItemRow = Selectable<SyncStagedItemTable>;
