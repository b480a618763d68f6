import { selectProductsVersion } from '../../db/queries/catalogue-version.js';
import { findPageAnchors, type PageAnchor, type ProductFilter } from '../../db/queries/products.js';
import type { Db } from '../../db/store.js';

/** An anchor every this many products; offsets below it read from the start as they are. */
export const ANCHOR_EVERY = 10_000;

interface Anchors {
  version: string;
  anchors: Promise<(PageAnchor & { pos: number })[]>;
}

/** Per store connection, per status filter ('' for none): the anchors of one catalogue state. */
const cache = new WeakMap<Db, Map<string, Anchors>>();

/**
 * What tells the positions of one catalogue state from another's: a product appears, goes or
 * changes status only with a product event (API, import, sync) or a change of the totals by
 * status (a synthetic seed writes no events). Edits that move nothing also change the version:
 * the anchors are rebuilt a little more often than they must be, never too seldom.
 */
async function positionsVersion(db: Db): Promise<string> {
  const parts = await selectProductsVersion(db);
  return JSON.stringify([parts.productEvent, parts.counts]);
}

/**
 * Where a page of the product list starts reading. An offset of n steps over n index entries
 * (SQLite and PostgreSQL alike), so page 10,000 of a million products cost tens of
 * milliseconds a request. Past ANCHOR_EVERY, the list starts instead from the nearest
 * anchor at or before the offset (a product's sort key and its position, every ANCHOR_EVERY
 * products, found by one walk of the index per catalogue state and kept until the catalogue
 * changes) and steps over at most ANCHOR_EVERY - 1 rows. The page is the same rows in the same
 * order; as with any offset list, a write landing between two requests moves what a later
 * page shows. Category and brand filters read their own way (queries/products.ts) and keep the
 * offset.
 */
export async function pageStart(
  db: Db,
  filter: ProductFilter,
  offset: number,
): Promise<{ offset: number; after?: PageAnchor }> {
  if (filter.category !== undefined || filter.brand !== undefined || offset < ANCHOR_EVERY) {
    return { offset };
  }
  const version = await positionsVersion(db);
  let byFilter = cache.get(db);
  if (!byFilter) cache.set(db, (byFilter = new Map()));
  const key = filter.status ?? '';
  let entry = byFilter.get(key);
  if (entry?.version !== version) {
    entry = { version, anchors: findPageAnchors(db, { status: filter.status }, ANCHOR_EVERY) };
    byFilter.set(key, entry);
    // A failed walk is not kept: the next request walks again.
    const failed = entry;
    entry.anchors.catch(() => {
      if (byFilter.get(key) === failed) byFilter.delete(key);
    });
  }
  const anchors = await entry.anchors;
  // The last anchor at or before the offset (positions are 1-based: anchor k*EVERY is the
  // product an offset of k*EVERY starts after).
  let lo = 0;
  let hi = anchors.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (anchors[mid]!.pos <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0) return { offset };
  const anchor = anchors[found]!;
  return { offset: offset - anchor.pos, after: { created_at: anchor.created_at, id: anchor.id } };
}
