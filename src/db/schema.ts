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

/** One request the discovery server answered (for analytics). */
export interface DiscoveryRequestTable {
  id: Generated<number>;
  at: Timestamp;
  method: string;
  path: string;
  /** The brand slug the path names, if any. */
  brand: string | null;
  status: number;
  /** Body bytes sent (0 for 304 and HEAD). */
  bytes: number;
  user_agent: string | null;
  /** The known AI agent the user agent names (GPTBot, ClaudeBot, ...), if any. */
  agent: string | null;
  /** 1 when `agent` is set. */
  is_ai_agent: number;
}

export interface Database {
  products: ProductTable;
  product_counts: ProductCountTable;
  events: EventTable;
  api_keys: ApiKeyTable;
  idempotency_keys: IdempotencyKeyTable;
  api_key_usage: ApiKeyUsageTable;
  audit_log: AuditLogTable;
  discovery_brands: DiscoveryBrandTable;
  discovery_requests: DiscoveryRequestTable;
}

export type ProductRow = Selectable<ProductTable>;
export type NewProductRow = Insertable<ProductTable>;
export type ProductRowUpdate = Updateable<ProductTable>;
export type EventRow = Selectable<EventTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type NewApiKeyRow = Insertable<ApiKeyTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type NewAuditLogRow = Insertable<AuditLogTable>;
export type DiscoveryBrandRow = Selectable<DiscoveryBrandTable>;
export type NewDiscoveryRequestRow = Insertable<DiscoveryRequestTable>;

// Keep ColumnType referenced for tables added later that need distinct select/insert types.
export type _ColumnType<S, I, U> = ColumnType<S, I, U>;
