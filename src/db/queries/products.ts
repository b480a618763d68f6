import { sql, type Kysely, type Transaction } from 'kysely';
import { preparedQuery } from '../prepared.js';
import type { Db } from '../database.js';
import type {
  Database,
  NewProductRow,
  ProductRow,
  ProductRowUpdate,
  ProductStatus,
} from '../schema.js';

type Executor = Db | Transaction<Database>;

export interface ProductFilter {
  category?: string | undefined;
  status?: ProductStatus | undefined;
}

const selectProductById = preparedQuery((db: Kysely<Database>, id: string) =>
  db.selectFrom('products').selectAll().where('id', '=', id),
);

export async function findProductById(db: Executor, id: string): Promise<ProductRow | undefined> {
  return (await selectProductById(db, id))[0];
}

/**
 * The category filter matches the category itself and everything below it:
 * "Apparel" matches "Apparel" and "Apparel > Shoes" but not "Apparelx". The range
 * ["Apparel > ", "Apparel >!") holds exactly the sub-categories (`!` follows the space),
 * and an index on category serves it without LIKE-escaping. Feeds select through it too.
 */
export function filtered(db: Executor, filter: ProductFilter) {
  let q = db.selectFrom('products');
  if (filter.status) q = q.where('status', '=', filter.status);
  const c = filter.category;
  if (c) {
    q = q.where((eb) =>
      eb.or([
        eb('category', '=', c),
        eb.and([eb('category', '>=', `${c} > `), eb('category', '<', `${c} >!`)]),
      ]),
    );
  }
  return q;
}

export async function listProducts(
  db: Executor,
  filter: ProductFilter,
  page: { limit: number; offset: number },
): Promise<ProductRow[]> {
  return filtered(db, filter)
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countProducts(db: Executor, filter: ProductFilter): Promise<number> {
  if (!filter.category) {
    // Totals per status are kept up to date in every write transaction: O(1) instead of COUNT(*).
    let q = db.selectFrom('product_counts').select((eb) => eb.fn.sum<number>('count').as('n'));
    if (filter.status) q = q.where('status', '=', filter.status);
    const row = await q.executeTakeFirst();
    return Number(row?.n ?? 0);
  }
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertProduct(trx: Executor, row: NewProductRow): Promise<void> {
  await trx.insertInto('products').values(row).execute();
  await adjustProductCount(trx, row.status, 1);
}

export async function updateProductRow(
  trx: Executor,
  id: string,
  before: ProductStatus,
  patch: ProductRowUpdate,
): Promise<void> {
  await trx.updateTable('products').set(patch).where('id', '=', id).execute();
  if (patch.status && patch.status !== before) {
    await adjustProductCount(trx, before, -1);
    await adjustProductCount(trx, patch.status, 1);
  }
}

export async function deleteProductRow(
  trx: Executor,
  id: string,
  status: ProductStatus,
): Promise<void> {
  await trx.deleteFrom('products').where('id', '=', id).execute();
  await adjustProductCount(trx, status, -1);
}

export async function adjustProductCount(
  trx: Executor,
  status: ProductStatus,
  delta: number,
): Promise<void> {
  await trx
    .updateTable('product_counts')
    .set({ count: sql`count + ${delta}` })
    .where('status', '=', status)
    .execute();
}
