import type { Db } from '../../db/store.js';
import type { FeedFormat, FeedRow, FeedRowUpdate } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import {
  countFeedProducts,
  countFeeds,
  deleteFeedRow,
  findFeedById,
  findMissingProductIds,
  insertFeedRow,
  listFeedProductIds,
  listFeedRows,
  measuredFeedRate,
  replaceFeedProducts,
  updateFeedRow,
  type FeedListFilter,
} from '../../db/queries/feeds.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { announceChange } from '../changes.js';
import { recordEvent } from '../events.js';
import type {
  Feed,
  FeedCreateInput,
  FeedDiagnostics,
  FeedListEntry,
  FeedUpdateInput,
} from './schemas.js';
import { presentPagination } from '../pagination.js';
import { checkChannelDefinition, parseFeedSettings } from './channels/index.js';
import { checkDeliveryChannel, deliveryColumns } from './delivery-definition.js';
import { parseDelivery } from './delivery-schemas.js';
import { SecretBox, type KeySettings } from '../integrations/secret-box.js';

/** Products per second assumed until the pipeline has measured itself on a large feed. */
export const DEFAULT_FEED_RATE = 40_000;
/** Fixed cost of a run over a feed (lock, queries, renames), added to every estimate. */
const RUN_OVERHEAD_MS = 500;
/** Retry-After for a feed whose estimate has passed (the run is late or not running). */
const LATE_RETRY_SECONDS = 5;

export interface FeedOptions {
  /** BASE_URL: feed urls are absolute. */
  baseUrl: string;
  /** How long before the pipeline picks a change up (the debounce delay). */
  startDelayMs: number;
  /** Encrypts delivery credentials (absent: a delivery with credentials is refused). */
  box?: SecretBox;
  /** ALLOW_PRIVATE_TARGETS: the outbound guard's setting for delivery targets. */
  allowPrivate?: boolean;
}

/** The options every writer of feeds (the API, the dashboard) uses, from the configuration. */
export function feedOptionsOf(
  config: KeySettings & {
    BASE_URL: string;
    FEEDS_DEBOUNCE_MS: number;
    ALLOW_PRIVATE_TARGETS: boolean;
  },
): FeedOptions {
  return {
    baseUrl: config.BASE_URL,
    startDelayMs: config.FEEDS_DEBOUNCE_MS,
    box: new SecretBox(config),
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
  };
}

function exportUrl(baseUrl: string, id: string): string {
  return `${baseUrl}/v1/feeds/${id}/export`;
}

/** A feed as list entries show it (SPEC part 2). */
export function presentFeedEntry(row: FeedRow, baseUrl: string): FeedListEntry {
  return {
    id: row.id,
    name: row.name,
    profile: row.profile,
    format: row.format,
    compression: row.compression,
    status: row.status,
    url: exportUrl(baseUrl, row.id),
    last_updated: row.last_updated,
    product_count: row.product_count,
  };
}

/** A feed as the API returns it: definition, publication and the last run's diagnostics. */
export async function presentFeed(db: Executor, row: FeedRow, baseUrl: string): Promise<Feed> {
  const diagnostics = row.diagnostics
    ? {
        // Runs before channels recorded no `excluded`: nothing was.
        excluded: 0,
        ...(JSON.parse(row.diagnostics) as Omit<FeedDiagnostics, 'url' | 'excluded'>),
        url: `${baseUrl}/v1/feeds/${row.id}/diagnostics`,
      }
    : null;
  return {
    ...presentFeedEntry(row, baseUrl),
    products: row.has_product_list ? await listFeedProductIds(db, row.id) : null,
    filters: {
      ...(row.filter_category !== null ? { category: row.filter_category } : {}),
      ...(row.filter_status !== null ? { status: row.filter_status } : {}),
    },
    settings: parseFeedSettings(row.settings),
    delivery: parseDelivery(row.delivery),
    credentials_set: row.credentials !== null,
    estimated_completion: row.status === 'processing' ? row.estimated_completion : null,
    generated_at: row.generated_at,
    last_error:
      row.last_error !== null
        ? { message: row.last_error, occurred_at: row.last_error_at ?? row.updated_at }
        : null,
    diagnostics,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Refuses product ids that name no product, naming the first one by its index. */
async function checkProductIds(db: Executor, ids: readonly string[], given: readonly string[]) {
  const missing = await findMissingProductIds(db, ids);
  if (missing.length === 0) return;
  const index = given.indexOf(missing[0]!);
  const more = missing.length > 1 ? ` (and ${missing.length - 1} more)` : '';
  throw new AppError('invalid_field', `products[${index}] names no product${more}.`, {
    field: `products[${index}]`,
    reason: `no product with id '${missing[0]}'${more}`,
  });
}

/**
 * When a feed in processing should be published: the debounce delay, a fixed overhead, and
 * its product count at the rate the pipeline measured on the feeds it generated last.
 */
export async function estimateCompletion(
  db: Executor,
  feed: FeedRow,
  startDelayMs: number,
  now: Date,
): Promise<string> {
  const products = await countFeedProducts(db, feed);
  const rate = (await measuredFeedRate(db, 10_000)) ?? DEFAULT_FEED_RATE;
  const ms = startDelayMs + RUN_OVERHEAD_MS + (products / rate) * 1000;
  return new Date(now.getTime() + Math.ceil(ms)).toISOString();
}

export async function getFeed(db: Db, id: string, baseUrl: string): Promise<Feed> {
  const row = await findFeedById(db, id);
  if (!row) throw notFound('feed', id);
  return presentFeed(db, row, baseUrl);
}

export async function listFeeds(
  db: Db,
  filter: FeedListFilter,
  page: { limit: number; offset: number },
  baseUrl: string,
) {
  const rows = await listFeedRows(db, filter, page);
  const total = await countFeeds(db, filter);
  return {
    feeds: rows.map((r) => presentFeedEntry(r, baseUrl)),
    pagination: presentPagination(page, rows.length, total),
  };
}

/** Creates a feed in status processing; the pipeline generates it (no event until then). */
export async function createFeed(
  db: Executor,
  input: FeedCreateInput,
  options: FeedOptions,
  now: Date = new Date(),
): Promise<Feed> {
  const ids = input.products ? [...new Set(input.products)] : undefined;
  checkChannelDefinition({
    profile: input.profile ?? 'agentshelf',
    format: input.format,
    compression: input.compression ?? null,
  });
  const stamp = now.toISOString();
  const row: FeedRow = {
    id: newId('feed'),
    name: input.name,
    profile: input.profile ?? 'agentshelf',
    format: input.format,
    compression: input.compression ?? null,
    settings: input.settings ? JSON.stringify(input.settings) : null,
    ...(await deliveryColumns(input.delivery, input.credentials, {
      ...options,
      channel: { profile: input.profile ?? 'agentshelf', format: input.format },
    })),
    status: 'processing',
    filter_category: input.filters?.category ?? null,
    filter_status: input.filters?.status ?? null,
    has_product_list: ids ? 1 : 0,
    revision: 1,
    estimated_completion: null,
    published_format: null,
    sha256: null,
    product_count: 0,
    last_updated: null,
    generated_at: null,
    last_run_ms: null,
    diagnostics: null,
    last_error: null,
    last_error_at: null,
    created_at: stamp,
    updated_at: stamp,
  };
  return withTransaction(db, async (trx) => {
    if (ids) await checkProductIds(trx, ids, input.products!);
    await insertFeedRow(trx, row);
    if (ids) await replaceFeedProducts(trx, row.id, ids);
    row.estimated_completion = await estimateCompletion(trx, row, options.startDelayMs, now);
    await updateFeedRow(trx, row.id, { estimated_completion: row.estimated_completion });
    announceChange(trx, 'feedsChanged');
    return presentFeed(trx, row, options.baseUrl);
  });
}

/**
 * Changes what the input carries. A changed definition (name, format, products, filters)
 * sends the feed back to processing; `status: inactive` stops publishing; `status: active`
 * on an inactive feed regenerates it. Records feed.updated; a request that changes nothing
 * returns the feed untouched and records nothing.
 */
export async function updateFeed(
  db: Executor,
  id: string,
  input: FeedUpdateInput,
  options: FeedOptions,
  now: Date = new Date(),
): Promise<Feed> {
  return withTransaction(db, async (trx) => {
    const before = await findFeedById(trx, id, true);
    if (!before) throw notFound('feed', id);
    const patch: FeedRowUpdate = {};
    if (input.name !== undefined && input.name !== before.name) patch.name = input.name;
    if (input.format !== undefined && input.format !== before.format) patch.format = input.format;
    channelPatch(before, input, patch);
    if (input.delivery !== undefined || input.credentials !== undefined) {
      const current = parseDelivery(before.delivery);
      const delivery =
        input.delivery === undefined ? current : (input.delivery ?? { type: 'hosted' as const });
      const credentials =
        input.credentials === undefined && before.credentials !== null && options.box
          ? JSON.parse(options.box.decrypt(before.credentials))
          : (input.credentials ?? undefined);
      const columns = await deliveryColumns(delivery, credentials, {
        ...options,
        channel: {
          profile: patch.profile ?? before.profile,
          format: patch.format ?? before.format,
        },
      });
      if (columns.delivery !== before.delivery) patch.delivery = columns.delivery;
      if (input.credentials !== undefined || columns.delivery === null)
        patch.credentials = columns.credentials;
    } else if (patch.profile !== undefined || patch.format !== undefined) {
      // The delivery it keeps must take the new profile and format, as at creation.
      checkDeliveryChannel(
        parseDelivery(before.delivery),
        { profile: patch.profile ?? before.profile, format: patch.format ?? before.format },
        patch.profile !== undefined ? 'profile' : 'format',
      );
    }
    if (input.filters !== undefined) {
      const category = input.filters?.category ?? null;
      const status = input.filters?.status ?? null;
      if (category !== before.filter_category) patch.filter_category = category;
      if (status !== before.filter_status) patch.filter_status = status;
    }
    let ids: string[] | undefined;
    if (input.products !== undefined) {
      // Ids are ASCII (CLIENT_ID_PATTERN), so SQLite's order and sort() agree.
      const next = input.products ? [...new Set(input.products)].sort() : [];
      const current = before.has_product_list ? await listFeedProductIds(trx, id) : [];
      const same =
        Boolean(before.has_product_list) === (input.products !== null) &&
        next.length === current.length &&
        next.every((v, i) => v === current[i]);
      if (!same) {
        if (input.products) await checkProductIds(trx, next, input.products);
        ids = next;
        patch.has_product_list = input.products ? 1 : 0;
      }
    }
    const definitionChanged = Object.keys(patch).length > 0 || ids !== undefined;
    let status = before.status;
    if (input.status === 'inactive') status = 'inactive';
    else if (input.status === 'active' && before.status === 'inactive') status = 'processing';
    if (definitionChanged && status === 'active') status = 'processing';
    if (!definitionChanged && status === before.status) {
      return presentFeed(trx, before, options.baseUrl);
    }
    patch.status = status;
    patch.revision = before.revision + 1;
    patch.updated_at = now.toISOString();
    await updateFeedRow(trx, id, patch);
    if (ids !== undefined) await replaceFeedProducts(trx, id, ids);
    const after = { ...before, ...patch } as FeedRow;
    after.estimated_completion =
      status === 'processing'
        ? await estimateCompletion(trx, after, options.startDelayMs, now)
        : null;
    await updateFeedRow(trx, id, { estimated_completion: after.estimated_completion });
    const feed = await presentFeed(trx, after, options.baseUrl);
    await recordEvent(trx, 'feed.updated', feed, now);
    announceChange(trx, 'feedsChanged');
    return feed;
  });
}

/**
 * The channel part of an update: profile, compression and settings, checked together with
 * the format the feed will have (a profile change may need a format the new profile takes).
 */
function channelPatch(before: FeedRow, input: FeedUpdateInput, patch: FeedRowUpdate): void {
  if (input.profile !== undefined && input.profile !== before.profile) {
    patch.profile = input.profile;
  }
  if (input.compression !== undefined && (input.compression ?? null) !== before.compression) {
    patch.compression = input.compression ?? null;
  }
  if (input.settings !== undefined) {
    const settings =
      input.settings && Object.keys(input.settings).length > 0
        ? JSON.stringify(input.settings)
        : null;
    if (settings !== before.settings) patch.settings = settings;
  }
  checkChannelDefinition({
    profile: patch.profile ?? before.profile,
    format: patch.format ?? before.format,
    compression: patch.compression === undefined ? before.compression : patch.compression,
  });
}

/** Deletes a feed; the next pipeline run removes its files. */
export async function deleteFeed(db: Executor, id: string): Promise<void> {
  await withTransaction(db, async (trx) => {
    if (!(await findFeedById(trx, id))) throw notFound('feed', id);
    await deleteFeedRow(trx, id);
    announceChange(trx, 'feedsChanged');
  });
}

function retryAfterSeconds(row: FeedRow, now: Date): number {
  const at = row.estimated_completion ? Date.parse(row.estimated_completion) : NaN;
  const seconds = Math.ceil((at - now.getTime()) / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : LATE_RETRY_SECONDS;
}

/** The 409 of a feed whose file is not there yet, with Retry-After from its estimate. */
export function feedNotReady(row: FeedRow, now: Date): AppError {
  return new AppError(
    'conflict',
    `Feed '${row.id}' has not been generated yet; retry after its estimated completion.`,
    { field: 'status', reason: 'not generated yet', retryAfter: retryAfterSeconds(row, now) },
  );
}

/**
 * The feed whose published file an export serves: 404 when it does not exist or is
 * inactive, 409 with Retry-After before its first generation.
 */
export async function findPublishedFeed(
  db: Db,
  id: string,
  now: Date,
): Promise<FeedRow & { published_format: FeedFormat }> {
  const row = await findFeedById(db, id);
  if (!row) throw notFound('feed', id);
  if (row.status === 'inactive') {
    throw new AppError(
      'not_found',
      `Feed '${id}' is inactive, so it is not published; PUT {"status":"active"} regenerates it.`,
      { field: 'status', reason: 'inactive' },
    );
  }
  if (row.published_format === null) throw feedNotReady(row, now);
  return row as FeedRow & { published_format: FeedFormat };
}

/** What a run published for one feed. */
export interface FeedPublication {
  /** The definition the run built (FeedRow.revision when it started). */
  revision: number;
  format: FeedFormat;
  sha256: string;
  /** The file was replaced (false: the content was the same and the file was kept). */
  changed: boolean;
  productCount: number;
  ms: number;
  diagnostics: Omit<FeedDiagnostics, 'url'>;
}

/**
 * Records a generation: the feed becomes active (unless its definition changed or it was
 * set inactive meanwhile) and, in the same transaction, feed.generated the first time and
 * feed.published whenever the file changed or the feed became active.
 */
export async function recordFeedPublished(
  db: Executor,
  id: string,
  publication: FeedPublication,
  baseUrl: string,
  now: Date = new Date(),
): Promise<FeedRow | undefined> {
  return withTransaction(db, async (trx) => {
    const before = await findFeedById(trx, id, true);
    if (!before) return undefined;
    const stamp = now.toISOString();
    const current = before.revision === publication.revision;
    const replaced = publication.changed || before.published_format !== publication.format;
    const patch: FeedRowUpdate = {
      published_format: publication.format,
      sha256: publication.sha256,
      product_count: publication.productCount,
      generated_at: stamp,
      last_run_ms: Math.round(publication.ms),
      diagnostics: JSON.stringify(publication.diagnostics),
    };
    if (replaced) patch.last_updated = stamp;
    const activated = current && before.status === 'processing';
    if (current && before.status !== 'inactive') {
      patch.status = 'active';
      patch.estimated_completion = null;
      patch.last_error = null;
      patch.last_error_at = null;
    }
    await updateFeedRow(trx, id, patch);
    const after = { ...before, ...patch } as FeedRow;
    if (after.status !== 'inactive') {
      const feed = await presentFeed(trx, after, baseUrl);
      if (before.generated_at === null) await recordEvent(trx, 'feed.generated', feed, now);
      if (replaced || activated) await recordEvent(trx, 'feed.published', feed, now);
    }
    return after;
  });
}

/**
 * Records a failed generation: the feed is set inactive with last_error (feed.updated),
 * unless its definition changed meanwhile, in which case only last_error is kept.
 */
export async function recordFeedFailed(
  db: Executor,
  id: string,
  revision: number,
  message: string,
  baseUrl: string,
  now: Date = new Date(),
): Promise<void> {
  await withTransaction(db, async (trx) => {
    const before = await findFeedById(trx, id, true);
    if (!before) return;
    const patch: FeedRowUpdate = { last_error: message, last_error_at: now.toISOString() };
    const deactivate = before.revision === revision && before.status !== 'inactive';
    if (deactivate) {
      patch.status = 'inactive';
      patch.estimated_completion = null;
    }
    await updateFeedRow(trx, id, patch);
    if (deactivate) {
      const feed = await presentFeed(trx, { ...before, ...patch } as FeedRow, baseUrl);
      await recordEvent(trx, 'feed.updated', feed, now);
    }
  });
}

/** Records that a feed's files were removed (it is inactive): nothing is published. */
export async function recordFeedUnpublished(db: Db, id: string): Promise<void> {
  await updateFeedRow(db, id, { published_format: null, sha256: null, product_count: 0 });
}
