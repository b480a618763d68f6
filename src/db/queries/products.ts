import { sql, type Kysely, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import { EXPONENTS } from '../../currencies.js';
import { preparedQuery } from '../prepared.js';
import type { Db } from '../store.js';
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
 * strings, no JSON.parse of images and attributes, no JSON.stringify. Serialising a page of
 * 250 costs a third of what it did. Strings go through json_quote, which escapes as
 * JSON.stringify does; images and attributes already hold the JSON text JSON.stringify
 * wrote, and are put in as they are (json_object would parse and re-render them).
 * PostgreSQL has to_json for json_quote.
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
 * and an index on category serves it without LIKE-escaping. Written `+category`, the same
 * test keeps SQLite off the category index (the documented unary-plus hint), so it walks
 * the catalogue in creation order and tests each row instead.
 */
function inCategory(c: string, options: { useIndex: boolean }): RawBuilder<SqlBool> {
  const column = options.useIndex ? sql.ref('category') : sql`+category`;
  return sql<SqlBool>`(${column} = ${c} or (${column} >= ${`${c} > `} and ${column} < ${`${c} >!`}))`;
}

/**
 * Products matching a filter. `creationOrder` reads them by walking the catalogue in
 * creation order (the status or creation index) and testing the category of each: right
 * when most products match, and for feeds, which read every match in that order anyway.
 * Otherwise SQLite reads the category's range of its index.
 */
export function filtered(db: Executor, filter: ProductFilter, options = { creationOrder: false }) {
  let q = db.selectFrom('products');
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.category)
    q = q.where(inCategory(filter.category, { useIndex: !options.creationOrder }));
  return q;
}

/**
 * How to read a page of a category: walk the catalogue in creation order until `needed`
 * (offset + limit) matches have passed, about needed x scope / matches rows each with a
 * table lookup; or read every match from the category index, which holds the sort keys, and
 * sort them. A lookup costs about four index entries. At a million products and a page of
 * 250, neither reads more than about 30,000 rows; counting and sorting a whole category
 * took seconds.
 */
export function pageInCreationOrder(matches: number, scope: number, needed: number): boolean {
  const LOOKUP_COST = 4;
  return matches > 0 && needed * scope * LOOKUP_COST < matches * matches;
}

/** A page of products as the API's JSON array (UTF-8), by creation time, then id. */
export async function findProductPageJson(
  db: Executor,
  filter: ProductFilter,
  page: { limit: number; offset: number },
  options = { creationOrder: true },
): Promise<{ json: Buffer; count: number }> {
  const ids = filtered(db, filter, options)
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset);
  // From the category index the page's ids come sorted from the index alone; only those
  // rows are then read in full.
  const rows = options.creationOrder
    ? ids.selectAll()
    : db.selectFrom('products').selectAll().where('id', 'in', ids.select('id'));
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

/**
 * How many products match. Totals per status and per (category, status) are kept in the
 * store (product_counts in each write transaction, category_counts by triggers), so this
 * reads a handful of rows, never the products.
 */
export async function countProducts(db: Executor, filter: ProductFilter): Promise<number> {
  const { category, status } = filter;
  const row = category
    ? await db
        .selectFrom('category_counts')
        .select((eb) => eb.fn.sum<number>('count').as('n'))
        .where(inCategory(category, { useIndex: true }))
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
        .executeTakeFirst()
    : await db
        .selectFrom('product_counts')
        .select((eb) => eb.fn.sum<number>('count').as('n'))
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
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
