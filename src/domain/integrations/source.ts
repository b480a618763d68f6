import type { Logger } from 'pino';
import type { z } from 'zod';
import type { HttpClient } from '../../net/http-client.js';
import type { ProductCreate } from '../products/schemas.js';

/**
 * The seam between the sync (domain/integrations/sync.ts) and each platform
 * (platforms/shopify.ts, woocommerce.ts, feed.ts). A platform only reads: it turns the
 * merchant's catalogue into SourceItems, and the sync validates, compares, writes, counts and
 * records. One item per sellable thing: a product with variants yields one item per variant,
 * each carrying `attributes.item_group_id` (the platform's product id).
 */

/** A product as `POST /v1/products` takes it, without `id` (the sync names it). */
export type SourceProduct = Omit<z.input<typeof ProductCreate>, 'id'>;

export type SourceItem =
  /** How many items the platform says there are, when it says (progress bars). */
  | { kind: 'total'; count: number }
  /**
   * One product. `externalId` is the platform's id of the sellable item (the variant id for a
   * variant), unique within the integration and stable across runs.
   */
  | { kind: 'product'; externalId: string; product: SourceProduct }
  /**
   * An item the platform sent that cannot become a product (a missing price, say). It fails
   * alone; `field` uses our field names where one applies.
   */
  | { kind: 'error'; externalId: string | null; field: string; reason: string }
  /**
   * The platform says nothing changed since `state` was saved (a feed answering 304): the
   * sync keeps every product as it is and deactivates nothing. Yielded alone.
   */
  | { kind: 'not_modified' };

export interface SourceContext {
  integrationId: string;
  /** The shop's host name, as the merchant gave it (`example.myshopify.com`). */
  shopDomain: string;
  /** Decrypted credentials, or null when none are set. Never log them. */
  credentials: Readonly<Record<string, string>> | null;
  /** The integration's settings (`url` for a feed, `bulk_threshold`, ...). */
  settings: Readonly<Record<string, unknown>>;
  /** Outbound HTTP, guarded against private targets, capped, retrying safe requests. */
  http: HttpClient;
  /** DEFAULT_CURRENCY, for platforms that do not say theirs. */
  defaultCurrency: string;
  /**
   * SHOPIFY_API_VERSION: the Admin API version when `settings.api_version` is unset. Optional
   * (contexts built before it existed leave it out): absent, the source's own default.
   */
  shopifyApiVersion?: string;
  signal: AbortSignal;
  logger: Logger;
  now(): Date;
  /** Waits (platform pacing, polling); aborted with `signal`. Tests pass a fast one. */
  sleep(ms: number): Promise<void>;
  /** What the platform kept from its last run (a feed's ETag, a token's expiry, ...). */
  state: Readonly<Record<string, unknown>>;
  /** Saves platform state for the next run, once this run has finished well. */
  setState(state: Record<string, unknown>): void;
  /** Stores refreshed credentials (a new Shopify access token), encrypted. */
  saveCredentials(credentials: Record<string, string>): Promise<void>;
}

/** What `POST /v1/integrations/:id/test` reports. */
export interface SourceTestResult {
  ok: boolean;
  /** What was checked, or what went wrong, in words for a merchant. */
  message: string;
}

export interface IntegrationSource {
  /** Connects and reads the least that proves the settings and credentials work. */
  test(ctx: SourceContext): Promise<SourceTestResult>;
  /**
   * The whole catalogue, streamed: never held whole in memory. Throws SourceError when the run
   * cannot go on (credentials refused, the platform down after retries).
   */
  items(ctx: SourceContext): AsyncIterable<SourceItem>;
  /**
   * What an inbound platform webhook (already verified by its signature) changes: the items
   * of a created or updated product (every variant of it: a variant of that group not among
   * them is gone), or the groups a delete removed. Absent when the platform sends none.
   * Synchronous when the payload says everything; a Promise when the source must read more
   * from the platform (through `ctx.http`) to know the change. Callers await it either way.
   */
  webhook?(
    ctx: SourceContext,
    topic: string,
    payload: unknown,
  ): WebhookChange | Promise<WebhookChange>;
}

export interface WebhookChange {
  /** Items as items() yields them (`product` and `error` kinds), all of one group each. */
  items: SourceItem[];
  /** `attributes.item_group_id`s of the products the platform deleted. */
  removedGroupIds: string[];
}

/** A failure of the whole run, with a message a merchant can act on. */
export class SourceError extends Error {
  constructor(
    message: string,
    /** `auth`: credentials refused (status becomes `error`); `unavailable`: try again later. */
    readonly kind: 'auth' | 'unavailable' | 'invalid' = 'unavailable',
  ) {
    super(message);
    this.name = 'SourceError';
  }
}
