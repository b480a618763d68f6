import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { EXPONENTS } from '../../domain/money.js';
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
 * The price as the API's JSON number, from integer minor units: the exact decimal without
 * trailing zeros (7990 USD -> 79.9, 500 JPY -> 500). Prices have at most 15 significant
 * digits (money.ts), so this is also what JavaScript prints for the same number.
 */
const priceJson: RawBuilder<unknown> = (() => {
  const decimal = (exponent: number) =>
    `rtrim(rtrim(printf('%d.%0${exponent}d', price_minor / ${10 ** exponent}, price_minor % ${10 ** exponent}), '0'), '.')`;
  const codesByExponent = new Map<number, string[]>();
  for (const [code, exponent] of Object.entries(EXPONENTS)) {
    codesByExponent.set(exponent, [...(codesByExponent.get(exponent) ?? []), code]);
  }
  // instr() in a constant list, not `in (...)`: SQLite builds a lookup table for every run of
  // a statement with an IN list, which costs more than the rest of a by-id read.
  const cases = [...codesByExponent].map(
    ([exponent, codes]) =>
      `when instr(',${codes.join(',')},', ',' || currency || ',') then ${exponent === 0 ? 'price_minor' : decimal(exponent)}`,
  );
  // Built from the constant table above only: no outside text reaches this SQL.
  return sql.raw(`case ${cases.join(' ')} else ${decimal(2)} end`);
})();

/**
 * A product as the API returns it (`presentProduct`), written as JSON by the database: byte
 * for byte what `JSON.stringify(presentProduct(row))` gives (a property test holds the two
 * together). Reads send it as it comes, as a blob: no twelve columns turned into JavaScript
 * strings, no JSON.parse of images and attributes, no JSON.stringify; a page of 250 costs a
 * third as much. Strings go through json_quote, which escapes as JSON.stringify does; images
 * and attributes already hold the JSON text JSON.stringify wrote, and are put in as they are
 * (json_object would parse and re-render them). PostgreSQL has to_json for json_quote.
 */
const quoted = (column: string) => sql.raw(`json_quote(${column})`);
const FIELDS: [name: string, json: RawBuilder<unknown>][] = [
  ['id', quoted('id')],
  ['name', quoted('name')],
  ['description', quoted('description')],
  ['price', priceJson],
  ['currency', quoted('currency')],
  ['status', quoted('status')],
  ['category', quoted('category')],
  ['images', sql.raw('images')],
  ['attributes', sql.raw('attributes')],
  ['created_at', quoted('created_at')],
  ['updated_at', quoted('updated_at')],
];
const productJson = sql`${sql.join(
  FIELDS.map(([name, json], i) => sql`${sql.lit(`${i === 0 ? '{' : ','}"${name}":`)} || ${json}`),
  sql` || `,
)} || '}'`;

const selectProductJsonById = preparedQuery((db: Kysely<Database>, id: string) =>
  db
    .selectFrom('products')
    .select(sql<Buffer>`cast(${productJson} as blob)`.as('json'))
    .where('id', '=', id),
);

/** The product's API JSON (UTF-8), or undefined when there is no such product. */
export async function findProductJsonById(db: Executor, id: string): Promise<Buffer | undefined> {
  return (await selectProductJsonById(db, id))[0]?.json;
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

/** A page of products as the API's JSON array (UTF-8), by creation time, then id. */
export async function findProductPageJson(
  db: Executor,
  filter: ProductFilter,
  page: { limit: number; offset: number },
): Promise<{ json: Buffer; count: number }> {
  const rows = filtered(db, filter)
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset);
  return db
    .selectFrom(rows.as('page'))
    .select([
      sql<Buffer>`cast('[' || coalesce(group_concat(${productJson}, ',' order by created_at, id), '') || ']' as blob)`.as(
        'json',
      ),
      (eb) => eb.fn.countAll<number>().as('count'),
    ])
    .executeTakeFirstOrThrow();
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
