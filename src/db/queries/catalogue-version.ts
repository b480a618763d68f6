import type { Db } from '../store.js';
import { productCountsByStatus } from './products.js';

const PRODUCT_EVENTS = ['product.created', 'product.updated', 'product.deleted'] as const;

/** What tells one state of the catalogue from another, in a few cheap queries. */
export interface CatalogueVersionParts {
  /** seq of the last product event (0: none). */
  productEvent: number;
  /** Product totals by status (synthetic seeds write no events), ordered by status. */
  counts: { status: string; count: number }[];
  feeds: number;
  /** The newest feed updated_at. */
  feedsChanged: string | null;
}

/**
 * The products' part of the version: a product appears, goes or changes status only with a
 * product event (API, import, sync) or a change of the totals by status (a synthetic seed
 * writes no events). What readers of product positions and counts key their caches by.
 */
export async function selectProductsVersion(
  db: Db,
): Promise<Pick<CatalogueVersionParts, 'productEvent' | 'counts'>> {
  const event = await db
    .selectFrom('events')
    .select('seq')
    .where('type', 'in', PRODUCT_EVENTS)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  // The counts as read (base and deltas): a fold leaves the version as it was.
  const counts = await productCountsByStatus(db);
  return { productEvent: event?.seq ?? 0, counts };
}

export async function selectCatalogueVersionParts(db: Db): Promise<CatalogueVersionParts> {
  const products = await selectProductsVersion(db);
  const feeds = await db
    .selectFrom('feeds')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('changed')])
    .executeTakeFirst();
  return {
    ...products,
    feeds: Number(feeds?.n ?? 0),
    feedsChanged: feeds?.changed ?? null,
  };
}
