import {
  countSyntheticProducts,
  insertSyntheticProducts,
} from '../db/queries/synthetic-products.js';
import type { Db } from '../db/store.js';
import { lockCatalogueWrites } from '../db/queries/products.js';
import type { NewProductRow, ProductStatus } from '../db/schema.js';

const CATEGORIES = [
  'Apparel > Shoes > Running',
  'Apparel > Tops > T-Shirts',
  'Home > Lighting > Desk Lamps',
  'Electronics > Audio > Earbuds',
  'Grocery > Coffee > Whole Bean',
  'Outdoor > Bags > Backpacks',
];

// A deterministic generator, so runs are comparable.
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gtin13(n: number): string {
  const body = `50${String(n).padStart(10, '0')}`;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}

export interface SyntheticOptions {
  count: number;
  brands?: number;
  /** Called after each batch with the number of rows written so far. */
  onProgress?: (written: number) => void;
  now?: Date;
}

/** The synthetic product with a given index, shaped like shared/bench-baseline.md's data. */
export function syntheticProduct(
  i: number,
  brands: number,
  stamp: string,
  rand: () => number,
): NewProductRow {
  const id = `syn_${String(i).padStart(8, '0')}`;
  const brand = `Brand ${String(Math.floor(rand() * brands)).padStart(4, '0')}`;
  const group = i % 4 === 0 ? null : `grp_${Math.floor(i / 4)}`;
  const status: ProductStatus = i % 50 === 49 ? 'draft' : 'active';
  return {
    id,
    name: `Synthetic product ${String(i).padStart(8, '0')} large`.slice(0, 40),
    description: `Item ${i}: a "sturdy" thing & more <b>bold</b> claims. `.repeat(6).slice(0, 300),
    price_minor: 100 + Math.floor(rand() * 99_900),
    currency: 'USD',
    status,
    category: CATEGORIES[i % CATEGORIES.length]!,
    images: JSON.stringify([
      `https://images.example.com/p/${id}/1.jpg`,
      `https://images.example.com/p/${id}/2.jpg`,
    ]),
    attributes: JSON.stringify({
      brand,
      features: ['Durable', 'Lightweight', 'Recyclable packaging'],
      gtin: gtin13(i),
      ...(group ? { item_group_id: group } : {}),
      url: `https://shop.example.com/products/${id}`,
      availability: 'in_stock',
      condition: 'new',
    }),
    brand,
    created_at: stamp,
    updated_at: stamp,
  };
}

/**
 * Adds N generated products for benchmarks, in transactions of 10,000 rows. These skip the
 * outbox on purpose: a benchmark catalogue should not queue a million webhook deliveries.
 * Ids continue after the synthetic products already present.
 */
export async function seedSynthetic(db: Db, options: SyntheticOptions): Promise<number> {
  const brands = options.brands ?? 1000;
  const stamp = (options.now ?? new Date()).toISOString();
  const start = await countSyntheticProducts(db);
  const rand = mulberry32(start + 1);
  const PER_TRANSACTION = 10_000;
  let written = 0;
  while (written < options.count) {
    const inThisTransaction = Math.min(PER_TRANSACTION, options.count - written);
    const rows: NewProductRow[] = [];
    for (let j = 0; j < inThisTransaction; j++) {
      rows.push(syntheticProduct(start + written + j, brands, stamp, rand));
    }
    await db.transaction().execute(async (trx) => {
      await lockCatalogueWrites(trx);
      await insertSyntheticProducts(trx, rows);
    });
    written += inThisTransaction;
    options.onProgress?.(written);
  }
  return written;
}
