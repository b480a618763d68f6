import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { insertInChunks } from '../insert-in-chunks.js';
import { preparedQuery } from '../prepared.js';
import { dialectOf } from '../dialect.js';
import type { Executor } from '../transaction.js';
import type {
  Database,
  NewProductRow,
  ProductRow,
  ProductRowUpdate,
  ProductStatus,
} from '../schema.js';

export interface ProductFilter {
  category?: string | undefined;
  status?: ProductStatus | undefined;
  /** attributes.brand exactly (the brand column). */
  brand?: string | undefined;
}

const selectProductById = preparedQuery((db: Kysely<Database>, id: string) =>
  db.selectFrom('products').select(PRODUCT_COLUMNS).where('id', '=', id),
);

export async function findProductById(db: Executor, id: string): Promise<ProductRow | undefined> {
  return (await selectProductById(db, id))[0];
}

const selectProductJsonById = preparedQuery((db: Kysely<Database>, id: string) =>
  db.selectFrom('products').select(dialectOf(db).productJson.as('json')).where('id', '=', id),
);

/** The product's API JSON (UTF-8), or undefined when there is no such product. */
export async function findProductJsonById(db: Executor, id: string): Promise<Buffer | undefined> {
  // On PostgreSQL's pool, the reads of one turn of the event loop go as one query.
  if (!db.isTransaction && dialectOf(db).name === 'postgres') return batchesOf(db).load(id);
  return jsonBytes((await selectProductJsonById(db, id))[0]?.json);
}

/** A product's JSON as the store gives it (text on PostgreSQL, a blob on SQLite), as bytes. */
function jsonBytes(json: Buffer | string | undefined): Buffer | undefined {
  return typeof json === 'string' ? Buffer.from(json) : json;
}

const selectProductJsonByIds = preparedQuery((db: Kysely<Database>, ids: string[]) =>
  db
    .selectFrom('products')
    .select(['id', dialectOf(db).productJson.as('json')])
    .where(sql<SqlBool>`id = any(${ids})`),
);

interface Waiter {
  resolve: (json: Buffer | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Products by id on PostgreSQL, read a batch at a time: the ids asked for in one turn of the
 * event loop (the requests whose bytes arrived together) are read by one query after it
 * (`id = any($1)`), each caller given its product. On this machine a round trip costs the
 * process about 0.25 ms of CPU (the socket's system calls), as much as the rest of a by-id
 * request; with 50 connections a query serves several requests. A batch waits for nothing
 * but the end of the turn. SQLite reads in place: it has no round trip to share.
 */
class ProductJsonBatches {
  private waiting: Map<string, Waiter[]> | undefined;

  constructor(private readonly db: Kysely<Database>) {}

  load(id: string): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      if (!this.waiting) {
        this.waiting = new Map();
        setImmediate(() => this.read());
      }
      const waiters = this.waiting.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
    });
  }

  private read(): void {
    const batch = this.waiting!;
    this.waiting = undefined;
    selectProductJsonByIds(this.db, [...batch.keys()]).then(
      (rows) => {
        for (const row of rows) {
          const json = jsonBytes(row.json);
          for (const w of batch.get(row.id) ?? []) w.resolve(json);
          batch.delete(row.id);
        }
        // Ids no row answered: no such product.
        for (const waiters of batch.values()) for (const w of waiters) w.resolve(undefined);
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      },
    );
  }
}

const batches = new WeakMap<object, ProductJsonBatches>();

function batchesOf(db: Kysely<Database>): ProductJsonBatches {
  let b = batches.get(db);
  if (!b) batches.set(db, (b = new ProductJsonBatches(db)));
  return b;
}

/**
 * The category filter matches the category itself and everything below it:
 * "Apparel" matches "Apparel" and "Apparel > Shoes" but not "Apparelx". The range
 * ["Apparel > ", "Apparel >!") holds exactly the sub-categories (`!` follows the space),
 * and an index on category serves it without LIKE-escaping. Written `+category`, the same
 * test keeps SQLite off the category index (the documented unary-plus hint), so it walks
 * the catalogue in creation order and tests each row instead.
 */
export function inCategory(
  db: Executor,
  c: string,
  options: { useIndex: boolean },
): RawBuilder<SqlBool> {
  const column = options.useIndex ? sql.ref('category') : dialectOf(db).unindexed('category');
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
    q = q.where(inCategory(db, filter.category, { useIndex: !options.creationOrder }));
  if (filter.brand !== undefined) {
    const column = options.creationOrder ? dialectOf(db).unindexed('brand') : sql.ref('brand');
    q = q.where(sql<SqlBool>`${column} = ${filter.brand}`);
  }
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

/** A page of products as the API's JSON array (text), by creation time, then id. */
export async function findProductPageJson(
  db: Executor,
  filter: ProductFilter,
  page: { limit: number; offset: number; after?: PageAnchor | undefined },
  options = { creationOrder: true },
): Promise<{ json: string; count: number }> {
  const ids = filtered(db, filter, options)
    .$if(page.after !== undefined, (q) =>
      q.where(sql<SqlBool>`(created_at, id) > (${page.after!.created_at}, ${page.after!.id})`),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset);
  const rowJson = dialectOf(db).productPageJson;
  // Each row's JSON in the page's order, joined here into one string (the caller makes the one
  // Buffer of the whole body). In creation order the index gives the order; from the category
  // index only the page's rows are read in full, then sorted.
  const texts = await (
    options.creationOrder
      ? ids.select(rowJson.as('json'))
      : db
          .selectFrom('products')
          .select(rowJson.as('json'))
          .where('id', 'in', ids.select('id'))
          .orderBy('created_at')
          .orderBy('id')
  ).execute();
  let joined = '[';
  for (let i = 0; i < texts.length; i++) joined += (i === 0 ? '' : ',') + texts[i]!.json;
  return { json: `${joined}]`, count: texts.length };
}

/** A product's place in creation order: the sort key of the list (created_at, then id). */
export interface PageAnchor {
  created_at: string;
  id: string;
}

/**
 * Every `every`-th product of a filter (no category) in creation order, with its 1-based
 * position: one walk of the status or creation index. A page far down the list then starts
 * from the anchor before it instead of stepping over every row from the first
 * (see domain/products/page-anchors.ts).
 */
export async function findPageAnchors(
  db: Executor,
  filter: Pick<ProductFilter, 'status'>,
  every: number,
): Promise<(PageAnchor & { pos: number })[]> {
  const numbered = filtered(db, { status: filter.status }, { creationOrder: true }).select([
    'created_at',
    'id',
    sql<number>`row_number() over (order by created_at, id)`.as('pos'),
  ]);
  const rows = await db
    .selectFrom(numbered.as('numbered'))
    .select(['pos', 'created_at', 'id'])
    .where(sql<SqlBool>`pos % ${every} = 0`)
    .orderBy('pos')
    .execute();
  return rows.map((r) => ({ pos: Number(r.pos), created_at: r.created_at, id: r.id }));
}

/**
 * How many products match. Totals per status and per (category, status) are kept in the
 * store (product_counts, category_counts: a base row plus its writers' deltas, see
 * adjustProductCount), so this reads a handful of rows, never the products.
 */
export async function countProducts(db: Executor, filter: ProductFilter): Promise<number> {
  const { category, status, brand } = filter;
  if (brand !== undefined) {
    // No counters by brand: its rows are counted from the brand index.
    const counted = await filtered(db, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(counted?.n ?? 0);
  }
  const row = category
    ? await db
        .selectFrom(
          db
            .selectFrom('category_counts')
            .select(['category', 'status', 'count'])
            .unionAll(
              db.selectFrom('category_count_deltas').select(['category', 'status', 'count']),
            )
            .as('c'),
        )
        .select((eb) => eb.fn.sum<number>('count').as('n'))
        .where(inCategory(db, category, { useIndex: true }))
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
        .executeTakeFirst()
    : await db
        .selectFrom(productTotals(db).as('c'))
        .select((eb) => eb.fn.sum<number>('count').as('n'))
        .$if(status !== undefined, (q) => q.where('status', '=', status!))
        .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The product_counts rows and their deltas, as (status, count) rows to sum. */
function productTotals(db: Executor) {
  return db
    .selectFrom('product_counts')
    .select(['status', 'count'])
    .unionAll(db.selectFrom('product_count_deltas').select(['status', 'count']));
}

/** Products per status (every status, zeros included), in status order. */
export async function productCountsByStatus(
  db: Executor,
): Promise<{ status: ProductStatus; count: number }[]> {
  const rows = await db
    .selectFrom(productTotals(db).as('c'))
    .select((eb) => ['status', eb.fn.sum<number>('count').as('count')])
    .groupBy('status')
    .orderBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
}

/**
 * Moves the writers' deltas into the base counters (serve runs it now and then; the counts
 * read the same before and after). PostgreSQL: one statement per table, taking only delta
 * rows no writer holds (SKIP LOCKED: a fold never waits for a writer, nor a writer long for
 * a fold), so it runs beside the writes. SQLite writes no deltas (one writer adds to the base
 * rows); a store copied from PostgreSQL may bring some, folded the same way.
 */
export async function foldCounterDeltas(db: Executor): Promise<void> {
  if (dialectOf(db).name === 'postgres') {
    await sql`with d as (
        delete from product_count_deltas where ctid in
          (select ctid from product_count_deltas for update skip locked)
        returning status, count)
      update product_counts p set count = p.count + s.n
      from (select status, sum(count) as n from d group by status) s
      where p.status = s.status`.execute(db);
    await sql`with d as (
        delete from category_count_deltas where ctid in
          (select ctid from category_count_deltas for update skip locked)
        returning category, status, count)
      insert into category_counts (category, status, count)
      select category, status, sum(count) from d group by category, status
      on conflict (category, status) do update set count = category_counts.count + excluded.count`.execute(
      db,
    );
    return;
  }
  await sql`update product_counts set count = count +
      (select coalesce(sum(d.count), 0) from product_count_deltas d
       where d.status = product_counts.status)`.execute(db);
  await sql`insert into category_counts (category, status, count)
      select category, status, sum(count) from category_count_deltas where true
      group by category, status
      on conflict (category, status) do update set count = category_counts.count + excluded.count`.execute(
    db,
  );
  await sql`delete from product_count_deltas`.execute(db);
  await sql`delete from category_count_deltas`.execute(db);
}

/** Transactions that hold the catalogue's write lock already (see lockCatalogueWrites). */
const catalogueLocked = new WeakSet<object>();
/** Transactions that joined the catalogue's writers (see joinProductWrites). */
const productWriters = new WeakSet<object>();

/**
 * Called first in a transaction whose decision spans many products (a sync's apply, an
 * integration's delete, a bulk create): waits for every transaction writing products to end
 * and keeps new ones out until this one ends (PostgreSQL `LOCK TABLE products IN SHARE ROW
 * EXCLUSIVE MODE`; two such transactions take turns), so every product it reads stays as read.
 * Once per transaction; SQLite's write transaction already excludes every other.
 */
export async function lockCatalogueWrites(trx: Executor): Promise<void> {
  if (!trx.isTransaction || catalogueLocked.has(trx)) return;
  await dialectOf(trx).lockTableWrites(trx, 'products');
  catalogueLocked.add(trx);
}

/**
 * Called first in a transaction that writes one product (the API's create, update, delete):
 * takes the products table's ROW EXCLUSIVE lock, which every writer of the table takes anyway
 * and which never waits for another writer, only for a transaction under lockCatalogueWrites
 * (and keeps one from starting meanwhile). Taking it before reading the product (rather than
 * at the first write) orders it before the product's row lock, so the two kinds of writer never
 * deadlock. Writers of different products then run side by side: the product's own row (FOR
 * UPDATE, findProductForUpdate) or its id's unique index decides, and the counters are the
 * writer's own delta rows (adjustProductCount).
 */
export async function joinProductWrites(trx: Executor): Promise<void> {
  if (!trx.isTransaction || catalogueLocked.has(trx) || productWriters.has(trx)) return;
  const dialect = dialectOf(trx);
  if (dialect.name === 'sqlite') return;
  await sql`lock table products in row exclusive mode`.execute(trx);
  productWriters.add(trx);
}

const selectProductForUpdate = preparedQuery((db: Kysely<Database>, id: string) =>
  dialectOf(db).lockForUpdate(db.selectFrom('products').selectAll().where('id', '=', id)),
);

/** A product, locked to the end of the transaction (PostgreSQL FOR UPDATE). */
export async function findProductForUpdate(
  trx: Executor,
  id: string,
): Promise<ProductRow | undefined> {
  return (await selectProductForUpdate(trx, id))[0];
}

/** Inserts a product unless its id is taken (then false, and nothing is written). */
export async function insertProduct(trx: Executor, row: NewProductRow): Promise<boolean> {
  const result = await trx
    .insertInto('products')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
  await adjustProductCount(trx, row.status, 1);
  return true;
}

/** Inserts many products with multi-row statements, and adjusts the counts once a status. */
export async function insertProducts(trx: Executor, rows: NewProductRow[]): Promise<void> {
  // Statements of 100 rows are compiled once and reused (a bulk writer's batches vary in size).
  await insertInChunks(trx as Kysely<Database>, 'products', rows, { maxRows: 100 });
  const perStatus = new Map<ProductStatus, number>();
  for (const row of rows) perStatus.set(row.status, (perStatus.get(row.status) ?? 0) + 1);
  for (const [status, n] of perStatus) await adjustProductCount(trx, status, n);
}

/**
 * The products of these ids that exist, each locked to the end of the transaction (PostgreSQL
 * FOR UPDATE, taken in id order). For a bulk writer that decides on the products it read (a
 * sync's apply): an API write of one of them waits for it, and one deleted since the caller
 * read its mapping is missing here, not gone under its update.
 */
export async function findProductsForUpdate(
  trx: Executor,
  ids: string[],
): Promise<Map<string, ProductRow>> {
  const found = new Map<string, ProductRow>();
  const sorted = [...new Set(ids)].sort();
  for (let i = 0; i < sorted.length; i += 500) {
    const query = trx
      .selectFrom('products')
      .selectAll()
      .where('id', 'in', sorted.slice(i, i + 500))
      .orderBy('id');
    for (const row of await dialectOf(trx).lockForUpdate(query).execute()) found.set(row.id, row);
  }
  return found;
}

/** The ids among these that a product already has. */
export async function findExistingProductIds(db: Executor, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('products')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) found.push(r.id);
  }
  return found;
}

/** The names and statuses of the products among these ids (at most a page's worth). */
export async function findProductNames(
  db: Executor,
  ids: string[],
): Promise<Map<string, { name: string; status: ProductStatus }>> {
  const names = new Map<string, { name: string; status: ProductStatus }>();
  if (ids.length === 0) return names;
  const rows = await db
    .selectFrom('products')
    .select(['id', 'name', 'status'])
    .where('id', 'in', ids)
    .execute();
  for (const r of rows) names.set(r.id, { name: r.name, status: r.status });
  return names;
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

/**
 * Adds to a status's product count. PostgreSQL: to this writer's own delta row (keyed by the
 * backend's pid, which runs one transaction at a time), so concurrent writers never wait for
 * each other on a counter; foldCounterDeltas moves the deltas into the base now and then.
 * SQLite: to the base row (one writer at a time in any case).
 */
export async function adjustProductCount(
  trx: Executor,
  status: ProductStatus,
  delta: number,
): Promise<void> {
  if (dialectOf(trx).name === 'postgres') {
    await sql`insert into product_count_deltas (status, writer, count)
      values (${status}, pg_backend_pid(), ${delta})
      on conflict (status, writer) do update set count = product_count_deltas.count + excluded.count`.execute(
      trx,
    );
    return;
  }
  await trx
    .updateTable('product_counts')
    .set({ count: sql`count + ${delta}` })
    .where('status', '=', status)
    .execute();
}

/**
 * The product columns the catalogue read model (domain/catalogue/product.ts) is made of: what
 * the feed records and the discovery registry read (fewer columns read faster).
 */
export const CATALOGUE_COLUMNS = [
  'id',
  'name',
  'description',
  'price_minor',
  'currency',
  'status',
  'category',
  'images',
  'attributes',
  'created_at',
  'updated_at',
] as const;

/**
 * Every column of a product row (ProductTable), named: not `*`, which on PostgreSQL also
 * reads the stored search vector.
 */
export const PRODUCT_COLUMNS = [...CATALOGUE_COLUMNS, 'brand'] as const;

/** A product row as the catalogue reads it: the CATALOGUE_COLUMNS of the products table. */
export type CatalogueRow = Pick<ProductRow, (typeof CATALOGUE_COLUMNS)[number]>;
