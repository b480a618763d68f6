import type { Transaction } from 'kysely';
import { insertInChunks } from '../insert-in-chunks.js';
import type { Database, NewProductRow, ProductStatus } from '../schema.js';
import type { Db } from '../store.js';
import { adjustProductCount } from './products.js';

/** How many synthetic (`syn_`) products the store holds. */
export async function countSyntheticProducts(db: Db): Promise<number> {
  const row = await db
    .selectFrom('products')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '>=', 'syn_')
    .where('id', '<', 'syn`') // '`' follows '_': the range holds exactly the syn_ ids
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Inserts generated products as they are, without events (a benchmark catalogue should not
 * queue a million webhook deliveries), and adds them to the kept counts.
 */
export async function insertSyntheticProducts(
  trx: Transaction<Database>,
  rows: NewProductRow[],
): Promise<void> {
  await insertInChunks(trx, 'products', rows, { maxRows: 500 });
  const counts = new Map<ProductStatus, number>();
  for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
  for (const [status, n] of counts) await adjustProductCount(trx, status, n);
}
