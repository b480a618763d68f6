import { sql } from 'kysely';
import { dialectOf } from '../dialect.js';
import { compileSlotted, slot, withValues } from '../prepared.js';
import type { Db } from '../store.js';
import type { Executor } from '../transaction.js';
import type {
  FeedFormat,
  FeedProfile,
  FeedRow,
  FeedRowUpdate,
  FeedStatus,
  NewFeedRow,
  ProductStatus,
} from '../schema.js';
import { CATALOGUE_COLUMNS, countProducts, filtered, type CatalogueRow } from './products.js';

/** What a feed selects: its product list (if any), category prefix and status. */
export interface FeedSelection {
  id: string;
  has_product_list: number;
  filter_category: string | null;
  filter_status: ProductStatus | null;
}

export interface FeedListFilter {
  format?: FeedFormat | undefined;
  profile?: FeedProfile | undefined;
  status?: FeedStatus | undefined;
}

/**
 * The row by id; with `lock`, locked to the end of the transaction (FOR UPDATE on
 * PostgreSQL) for a read-decide-write path that decides on it.
 */
export async function findFeedById(
  db: Executor,
  id: string,
  lock = false,
): Promise<FeedRow | undefined> {
  const query = db.selectFrom('feeds').selectAll().where('id', '=', id);
  return (lock ? dialectOf(db).lockForUpdate(query) : query).executeTakeFirst();
}

function filteredFeeds(db: Executor, filter: FeedListFilter) {
  let q = db.selectFrom('feeds');
  if (filter.format) q = q.where('format', '=', filter.format);
  if (filter.profile) q = q.where('profile', '=', filter.profile);
  if (filter.status) q = q.where('status', '=', filter.status);
  return q;
}

export async function listFeedRows(
  db: Executor,
  filter: FeedListFilter,
  page: { limit: number; offset: number },
): Promise<FeedRow[]> {
  return filteredFeeds(db, filter)
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countFeeds(db: Executor, filter: FeedListFilter): Promise<number> {
  const row = await filteredFeeds(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Feeds a pipeline run generates: active and processing ones, oldest first. */
export async function listFeedsToGenerate(db: Executor): Promise<FeedRow[]> {
  return db
    .selectFrom('feeds')
    .selectAll()
    .where('status', 'in', ['active', 'processing'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function insertFeedRow(trx: Executor, row: NewFeedRow): Promise<void> {
  await trx.insertInto('feeds').values(row).execute();
}

export async function updateFeedRow(
  trx: Executor,
  id: string,
  patch: FeedRowUpdate,
): Promise<void> {
  await trx.updateTable('feeds').set(patch).where('id', '=', id).execute();
}

export async function deleteFeedRow(trx: Executor, id: string): Promise<void> {
  // feed_products rows go with it (ON DELETE CASCADE).
  await trx.deleteFrom('feeds').where('id', '=', id).execute();
}

/** Replaces a feed's product list (an empty list removes it). */
export async function replaceFeedProducts(
  trx: Executor,
  feedId: string,
  productIds: readonly string[],
): Promise<void> {
  await trx.deleteFrom('feed_products').where('feed_id', '=', feedId).execute();
  for (let i = 0; i < productIds.length; i += 500) {
    const values = productIds
      .slice(i, i + 500)
      .map((product_id) => ({ feed_id: feedId, product_id }));
    await trx.insertInto('feed_products').values(values).execute();
  }
}

export async function listFeedProductIds(db: Executor, feedId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('feed_products')
    .select('product_id')
    .where('feed_id', '=', feedId)
    .orderBy('product_id')
    .execute();
  return rows.map((r) => r.product_id);
}

/** The ids among `ids` that name no product. */
export async function findMissingProductIds(
  db: Executor,
  ids: readonly string[],
): Promise<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('products')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return ids.filter((id) => !found.has(id));
}

function selectedProducts(db: Executor, feed: FeedSelection) {
  let q = filtered(
    db,
    {
      category: feed.filter_category ?? undefined,
      // Without filters.status a feed carries active products only, also from its product list.
      status: feed.filter_status ?? 'active',
    },
    // A feed reads every match in creation order: walk that order, never sort a category.
    { creationOrder: true },
  );
  if (feed.has_product_list) {
    q = q.where('id', 'in', (eb) =>
      eb.selectFrom('feed_products').select('product_id').where('feed_id', '=', feed.id),
    );
  }
  return q;
}

/** The product columns a feed record is made of: the catalogue read model's. */
export type FeedSourceRow = CatalogueRow;

/**
 * The products of a feed in a stable order (creation time, then id), so an unchanged
 * catalogue gives byte-identical files.
 */
export function selectFeedProducts(db: Executor, feed: FeedSelection) {
  return selectedProducts(db, feed).select(CATALOGUE_COLUMNS).orderBy('created_at').orderBy('id');
}

/**
 * A feed's products a page at a time after a cursor (keyset paging on the (status,
 * created_at, id) index). Reading a page at once skips the per-row async steps of
 * `.stream()`, which cost the pipeline more than the rows themselves; run the pages in one
 * read transaction for a consistent snapshot. The two queries (the first page, a page after
 * a cursor) are built and compiled once for the walk, and each page only puts its cursor
 * into the parameters: building and compiling them for each page took about 7% of a flat
 * feed's main thread.
 */
export function feedProductPages(
  db: Executor,
  feed: FeedSelection,
  limit: number,
): (after: Pick<FeedSourceRow, 'created_at' | 'id'> | undefined) => Promise<FeedSourceRow[]> {
  const first = selectFeedProducts(db, feed).limit(limit).compile();
  // The cursor's values go in slots 0 (created_at) and 1 (id).
  const next = compileSlotted(
    selectFeedProducts(db, feed)
      .where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(slot(0), slot(1))))
      .limit(limit),
  );
  if (!next.slots.includes(0) || !next.slots.includes(1))
    throw new Error('the feed page query lost its cursor parameters');
  return async (after) => {
    const page = after ? withValues(next, [after.created_at, after.id]) : first;
    return (await db.executeQuery(page)).rows;
  };
}

/** A feed's product row with its variant-group key (attributes.item_group_id, else its id). */
export type FeedGroupRow = FeedSourceRow & { group_key: string };

/**
 * Streams a feed's products in variant-group order (group key, then id), so the variants of
 * one grouped record arrive together: one query, which reads products_group_order (status,
 * group key, id) in order instead of sorting the selection. Gives the rows `chunk` at a
 * time, as the driver reads them (the query builder's `.stream()` gives them one by one, an
 * async step each). Run it on a connection no other query waits for (the reader).
 */
export async function* streamFeedProductsByGroup(
  db: Db,
  feed: FeedSelection,
  chunk: number,
): AsyncIterableIterator<FeedGroupRow[]> {
  const groupKey = sql<string>`coalesce(${dialectOf(db).jsonMember('attributes', 'item_group_id')}, id)`;
  const query = selectedProducts(db, feed)
    .select(CATALOGUE_COLUMNS)
    .select(groupKey.as('group_key'))
    .orderBy(groupKey)
    .orderBy('id')
    .compile();
  const results = db.getExecutor().stream<FeedGroupRow>(query, chunk)[Symbol.asyncIterator]();
  let page: FeedGroupRow[] = [];
  try {
    // The next chunk is asked for before this one is given out: on PostgreSQL the cursor's
    // next fetch runs while the caller maps these rows.
    let next = results.next();
    for (;;) {
      const result = await next;
      if (result.done) break;
      next = results.next();
      next.catch(() => undefined);
      // Whatever the driver's chunks (Kysely's own SQLite driver gives a row at a time).
      for (const row of result.value.rows) {
        page.push(row);
        if (page.length === chunk) {
          yield page;
          page = [];
        }
      }
    }
  } finally {
    // Closes the cursor when the caller stops early (for await's own return, made by hand).
    await results.return?.();
  }
  if (page.length > 0) yield page;
}

export async function countFeedProducts(db: Executor, feed: FeedSelection): Promise<number> {
  if (!feed.has_product_list && !feed.filter_category) {
    return countProducts(db, { status: feed.filter_status ?? 'active' });
  }
  const row = await selectedProducts(db, feed)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Products per second the pipeline reached on the feeds it generated last (weighted by
 * size); undefined until feeds of at least `minProducts` products have been generated.
 */
export async function measuredFeedRate(
  db: Executor,
  minProducts: number,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('feeds')
    .select((eb) => [
      eb.fn.sum<number>('product_count').as('products'),
      eb.fn.sum<number>('last_run_ms').as('ms'),
    ])
    .where('last_run_ms', '>', 0)
    .executeTakeFirst();
  const products = Number(row?.products ?? 0);
  const ms = Number(row?.ms ?? 0);
  if (products < minProducts || ms <= 0) return undefined;
  return (products / ms) * 1000;
}

/** Every feed's status and published format (the pipeline removes files nothing publishes). */
export async function listFeedPublications(db: Executor) {
  return db.selectFrom('feeds').select(['id', 'status', 'published_format']).execute();
}

/** The id of a feed waiting in processing, if any. */
export async function selectProcessingFeedId(db: Db): Promise<string | undefined> {
  const row = await db
    .selectFrom('feeds')
    .select('id')
    .where('status', '=', 'processing')
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** Active feeds that have a published file, and its format. */
export async function selectPublishedFeeds(
  db: Db,
): Promise<{ id: string; published_format: FeedFormat }[]> {
  const rows = await db
    .selectFrom('feeds')
    .select(['id', 'published_format'])
    .where('status', '=', 'active')
    .where('published_format', 'is not', null)
    .execute();
  return rows.map((r) => ({ id: r.id, published_format: r.published_format! }));
}
