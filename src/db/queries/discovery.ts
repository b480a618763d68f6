import { sql } from 'kysely';
import { dialectOf } from '../dialect.js';
import { insertInChunks } from '../insert-in-chunks.js';
import { bumpChangeVersion } from './change-versions.js';
import { CATALOGUE_COLUMNS } from './products.js';
import type { Db } from '../store.js';
import type { DiscoveryBrandRow } from '../schema.js';

/** Active products per brand value (null: products without a brand), with the newest change. */
export interface BrandTally {
  brand: string | null;
  product_count: number;
  updated_at: string;
}

/**
 * The variant-group key, as written in the products_discovery index: SQLite uses the index
 * only for this exact expression.
 */
const groupKey = (db: Db) =>
  sql<string>`coalesce(${dialectOf(db).jsonMember('attributes', 'item_group_id')}, id)`;

/** Count and newest updated_at of active products per brand, read from the index alone. */
export async function tallyActiveBrands(db: Db): Promise<BrandTally[]> {
  const rows = await db
    .selectFrom('products')
    .where('status', '=', 'active')
    .select((eb) => [
      'brand',
      eb.fn.countAll<number>().as('product_count'),
      eb.fn.max('updated_at').as('updated_at'),
    ])
    .groupBy('brand')
    .execute();
  return rows.map((r) => ({
    brand: r.brand,
    product_count: Number(r.product_count),
    updated_at: r.updated_at,
  }));
}

/**
 * Streams a brand's active products in variant-group order (group key, then id), so the
 * variants of one ACP Product arrive together. `includeUnbranded` adds the products that carry
 * no brand (they belong to the store's brand).
 */
export function streamBrandProducts(db: Db, brand: string, includeUnbranded: boolean) {
  const GROUP_KEY = groupKey(db);
  return db
    .selectFrom('products')
    .select(CATALOGUE_COLUMNS)
    .select(GROUP_KEY.as('group_key'))
    .where('status', '=', 'active')
    .where((eb) =>
      includeUnbranded
        ? eb.or([eb('brand', '=', brand), eb('brand', 'is', null)])
        : eb('brand', '=', brand),
    )
    .orderBy(GROUP_KEY)
    .orderBy('id')
    .stream(1000);
}

export async function listDiscoveryBrands(db: Db): Promise<DiscoveryBrandRow[]> {
  return db.selectFrom('discovery_brands').selectAll().execute();
}

export async function insertDiscoveryBrands(
  db: Db,
  rows: { name: string; slug: string; created_at: string }[],
): Promise<void> {
  await insertInChunks(db, 'discovery_brands', rows, { maxRows: 5000 });
  await bumpChangeVersion(db, 'discovery_brands');
}

/** Records what was published for a brand (product_count 0: no longer published). */
export async function recordBrandPublication(
  db: Db,
  name: string,
  state: {
    product_count: number;
    updated_at: string | null;
    build_key: string | null;
    published_at: string | null;
  },
): Promise<void> {
  await db.updateTable('discovery_brands').set(state).where('name', '=', name).execute();
  await bumpChangeVersion(db, 'discovery_brands');
}
