import { sql, type Kysely } from 'kysely';
import { insertValuesInChunks, upsertValuesInChunks } from '../insert-in-chunks.js';
import type { Executor } from '../transaction.js';
import type {
  AnalyticsDailyAgentTable,
  AnalyticsDailyBrandTable,
  AnalyticsDailyProductTable,
  AnalyticsDailyRevenueTable,
  AnalyticsDailyTrafficTable,
  Database,
  InteractionKind,
  NewInteractionRow,
} from '../schema.js';
import { countProducts } from './products.js';

/** The kinds that are AI interactions (CONTRACT part 9); bots and people are counted apart. */
export const AI_KINDS: readonly InteractionKind[] = ['assistant', 'search', 'training', 'agent'];

const KEY_CHUNK = 500;

/** The columns of an interaction as insertNewInteractions takes them, in this order. */
export const INTERACTION_COLUMNS = [
  'at',
  'source',
  'method',
  'path',
  'brand',
  'product_id',
  'status',
  'bytes',
  'user_agent',
  'agent',
  'operator',
  'kind',
  'verified',
  'event_type',
  'amount_minor',
  'currency',
  'dedupe_key',
] as const satisfies readonly (keyof NewInteractionRow)[];

/**
 * Inserts interactions (values in INTERACTION_COLUMNS order); a row whose dedupe_key is
 * already stored (or comes earlier in `rows`) is skipped by the unique index
 * (`ON CONFLICT DO NOTHING`). Answers the dedupe keys of the rows inserted (null for rows
 * without one), or null when every row was inserted. Runs in the caller's transaction.
 */
export async function insertNewInteractions(
  db: Executor,
  rows: readonly (readonly unknown[])[],
  keyed: boolean,
): Promise<unknown[] | null> {
  if (!keyed) {
    await insertValuesInChunks(db as Kysely<Database>, 'interactions', INTERACTION_COLUMNS, rows, {
      maxRows: 1000,
    });
    return null;
  }
  const conflict = { columns: ['dedupe_key'], whereNotNull: 'dedupe_key' };
  const withReturning = () =>
    upsertValuesInChunks(
      db as Kysely<Database>,
      'interactions',
      INTERACTION_COLUMNS,
      rows,
      { ...conflict, returning: 'dedupe_key' },
      { maxRows: 1000 },
    );
  // After a batch with duplicates (a file imported again), the next is likely one too.
  if (lastBatchHadDuplicates) {
    const { returned } = await withReturning();
    lastBatchHadDuplicates = returned.length < rows.length;
    return returned;
  }
  // Most batches are new rows: inserted without RETURNING (which costs a result row each),
  // and only when the unique index skipped some is the batch undone and inserted again
  // with it, to learn which were new. Savepoints are standard SQL (SQLite, PostgreSQL).
  await sql`savepoint insert_interactions`.execute(db);
  const first = await upsertValuesInChunks(
    db as Kysely<Database>,
    'interactions',
    INTERACTION_COLUMNS,
    rows,
    conflict,
    { maxRows: 1000 },
  );
  if (first.affected === rows.length) {
    await sql`release savepoint insert_interactions`.execute(db);
    return null;
  }
  await sql`rollback to savepoint insert_interactions`.execute(db);
  await sql`release savepoint insert_interactions`.execute(db);
  lastBatchHadDuplicates = true;
  return (await withReturning()).returned;
}

/** Only which way insertNewInteractions tries first: either way is exact. */
let lastBatchHadDuplicates = false;

type Counts<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

/**
 * Adds rows to a rollup: insert, or add the counts to the row of the same key. Rows must have
 * distinct keys (callers aggregate first).
 */
export async function addToRollup<T extends keyof Database & string>(
  db: Executor,
  table: T,
  keys: readonly (keyof Database[T] & string)[],
  counts: readonly (Counts<Database[T]> & string)[],
  rows: readonly Database[T][],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = [...keys, ...counts] as (keyof Database[T] & string)[];
  // In key order: concurrent transactions adding to the same rows lock them in one order
  // (an upsert locks row by row), so they never wait on each other in a circle.
  const keyOf = (row: Database[T]) => JSON.stringify(keys.map((k) => row[k]));
  const sorted = rows
    .map((row) => ({ row, key: keyOf(row) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const values = sorted.map(({ row }) => columns.map((c) => row[c]));
  await upsertValuesInChunks(
    db as Kysely<Database>,
    table,
    columns,
    values,
    { columns: keys, add: counts },
    { maxRows: 500 },
  );
}

export const TRAFFIC_KEYS = ['day', 'source', 'brand', 'agent', 'operator', 'kind'] as const;
export const TRAFFIC_COUNTS = ['interactions', 'fetched', 'verified', 'bytes'] as const;
export const PRODUCT_COUNTS = [
  'interactions',
  'assistant',
  'search',
  'training',
  'agent',
  'views',
  'clicks',
  'conversions',
  'revenue_minor',
] as const;
export const REVENUE_COUNTS = ['conversions', 'amount_minor'] as const;

export async function addTraffic(db: Executor, rows: AnalyticsDailyTrafficTable[]): Promise<void> {
  await addToRollup(db, 'analytics_daily_traffic', TRAFFIC_KEYS, TRAFFIC_COUNTS, rows);
}

export async function addAgentDays(db: Executor, rows: AnalyticsDailyAgentTable[]): Promise<void> {
  await addToRollup(
    db,
    'analytics_daily_agents',
    ['day', 'source', 'agent', 'operator', 'kind'],
    TRAFFIC_COUNTS,
    rows,
  );
}

export async function addBrandDays(db: Executor, rows: AnalyticsDailyBrandTable[]): Promise<void> {
  await addToRollup(
    db,
    'analytics_daily_brands',
    ['day', 'brand'],
    ['interactions', 'fetched'],
    rows,
  );
}

export async function addProductDays(
  db: Executor,
  rows: AnalyticsDailyProductTable[],
): Promise<void> {
  await addToRollup(db, 'analytics_daily_products', ['day', 'product_id'], PRODUCT_COUNTS, rows);
}

export async function addRevenue(db: Executor, rows: AnalyticsDailyRevenueTable[]): Promise<void> {
  await addToRollup(
    db,
    'analytics_daily_revenue',
    ['day', 'currency', 'product_id'],
    REVENUE_COUNTS,
    rows,
  );
}

/** Deletes up to `limit` of the oldest interactions before `cutoff`; returns how many went. */
export async function deleteInteractionsBefore(
  db: Executor,
  cutoff: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('interactions')
    .where(
      'id',
      'in',
      db
        .selectFrom('interactions')
        .select('id')
        .where('at', '<', cutoff)
        .orderBy('at')
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Which of these product ids exist (any status). */
export async function existingProductIds(db: Executor, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += KEY_CHUNK) {
    const rows = await db
      .selectFrom('products')
      .select('id')
      .where('id', 'in', ids.slice(i, i + KEY_CHUNK))
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

// --- Reads: every one from the rollups (and small tables), never from interactions. ---

export async function countActiveProducts(db: Executor): Promise<number> {
  return countProducts(db, { status: 'active' });
}

/** AI interactions per day of [start, end] (days without any are absent). */
export async function aiInteractionsByDay(
  db: Executor,
  start: string,
  end: string,
): Promise<{ day: string; kind: InteractionKind; interactions: number }[]> {
  const rows = await db
    .selectFrom('analytics_daily_agents')
    .select((eb) => ['day', 'kind', eb.fn.sum<number>('interactions').as('interactions')])
    .where('day', '>=', start)
    .where('day', '<=', end)
    .groupBy(['day', 'kind'])
    .execute();
  return rows.map((r) => ({ day: r.day, kind: r.kind, interactions: Number(r.interactions) }));
}

/** Conversions and amounts per day and currency of [start, end]. */
export async function revenueByDay(
  db: Executor,
  start: string,
  end: string,
): Promise<{ day: string; currency: string; conversions: number; amount_minor: number }[]> {
  const rows = await db
    .selectFrom('analytics_daily_revenue')
    .select((eb) => [
      'day',
      'currency',
      eb.fn.sum<number>('conversions').as('conversions'),
      eb.fn.sum<number>('amount_minor').as('amount_minor'),
    ])
    .where('day', '>=', start)
    .where('day', '<=', end)
    .groupBy(['day', 'currency'])
    .execute();
  return rows.map((r) => ({
    day: r.day,
    currency: r.currency,
    conversions: Number(r.conversions),
    amount_minor: Number(r.amount_minor),
  }));
}

/** Totals of [start, end]: AI interactions and conversions (for the previous period's trend). */
export async function periodTotals(
  db: Executor,
  start: string,
  end: string,
): Promise<{ ai_interactions: number; conversions: number }> {
  const [ai, conv] = await Promise.all([
    db
      .selectFrom('analytics_daily_agents')
      .select((eb) => eb.fn.sum<number>('interactions').as('n'))
      .where('day', '>=', start)
      .where('day', '<=', end)
      .where('kind', 'in', AI_KINDS)
      .executeTakeFirst(),
    db
      .selectFrom('analytics_daily_revenue')
      .select((eb) => eb.fn.sum<number>('conversions').as('n'))
      .where('day', '>=', start)
      .where('day', '<=', end)
      .executeTakeFirst(),
  ]);
  return { ai_interactions: Number(ai?.n ?? 0), conversions: Number(conv?.n ?? 0) };
}

/** The brands whose page or feed an AI agent fetched in [start, end] (slugs). */
export async function fetchedBrandSlugs(
  db: Executor,
  start: string,
  end: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('analytics_daily_brands')
    .select('brand')
    .where('day', '>=', start)
    .where('day', '<=', end)
    .where('fetched', '>', 0)
    .distinct()
    .execute();
  return rows.map((r) => r.brand);
}

/** Published brands: name, slug and how many products their last publication carried. */
export async function discoveryBrandCounts(
  db: Executor,
): Promise<{ name: string; slug: string; product_count: number }[]> {
  const rows = await db
    .selectFrom('discovery_brands')
    .select(['name', 'slug', 'product_count'])
    .orderBy('name')
    .execute();
  return rows.map((r) => ({ ...r, product_count: Number(r.product_count) }));
}

/**
 * Products discovered in [start, end] (CONTRACT part 9): the published products of every brand
 * whose page or feed an AI agent fetched (discovery_brands.product_count, what the last
 * publication carried), plus the active products an AI interaction or event names that are
 * not of such a brand.
 */
export async function countDiscovered(
  db: Executor,
  start: string,
  end: string,
  storeName: string,
): Promise<number> {
  const [fetched, brands] = await Promise.all([
    fetchedBrandSlugs(db, start, end),
    discoveryBrandCounts(db),
  ]);
  const viaBrands = countViaBrands(brands, fetched);
  return viaBrands + (await countNamedOutsideBrands(db, start, end, storeName, fetched));
}

/** The products the brands of `fetched` (slugs) published. */
export function countViaBrands(
  brands: readonly { slug: string; product_count: number }[],
  fetched: readonly string[],
): number {
  const set = new Set(fetched);
  let n = 0;
  for (const b of brands) if (set.has(b.slug)) n += b.product_count;
  return n;
}

/**
 * The active products the product rollup names in [start, end] that are not of a brand an AI
 * agent fetched in that period (`fetched`, slugs: those count through their brand).
 */
export async function countNamedOutsideBrands(
  db: Executor,
  start: string,
  end: string,
  storeName: string,
  fetched: readonly string[],
): Promise<number> {
  // A long list is read from the rollup again rather than bound (parameters are limited).
  const fetchedBrands =
    fetched.length <= 10_000
      ? [...fetched]
      : db
          .selectFrom('analytics_daily_brands')
          .select('brand')
          .where('day', '>=', start)
          .where('day', '<=', end)
          .where('fetched', '>', 0);
  const named = await db
    .selectFrom(
      db
        .selectFrom('analytics_daily_products')
        .select('product_id')
        .where('day', '>=', start)
        .where('day', '<=', end)
        .distinct()
        .as('d'),
    )
    .innerJoin('products as p', 'p.id', 'd.product_id')
    .leftJoin('discovery_brands as b', (j) =>
      j.on((eb) => eb('b.name', '=', eb.fn.coalesce('p.brand', sql.lit(storeName)))),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('p.status', '=', 'active')
    .$if(!Array.isArray(fetchedBrands) || fetchedBrands.length > 0, (q) =>
      q.where((eb) => eb.or([eb('b.slug', 'is', null), eb('b.slug', 'not in', fetchedBrands)])),
    )
    .executeTakeFirst();
  return Number(named?.n ?? 0);
}

/** AI interactions of [start, end] per agent, operator and kind. */
export async function trafficByAgent(
  db: Executor,
  start: string,
  end: string,
): Promise<
  {
    agent: string;
    operator: string;
    kind: InteractionKind;
    interactions: number;
    verified: number;
  }[]
> {
  const rows = await db
    .selectFrom('analytics_daily_agents')
    .select((eb) => [
      'agent',
      'operator',
      'kind',
      eb.fn.sum<number>('interactions').as('interactions'),
      eb.fn.sum<number>('verified').as('verified'),
    ])
    .where('day', '>=', start)
    .where('day', '<=', end)
    .groupBy(['agent', 'operator', 'kind'])
    .execute();
  return rows.map((r) => ({
    agent: r.agent,
    operator: r.operator,
    kind: r.kind,
    interactions: Number(r.interactions),
    verified: Number(r.verified),
  }));
}

export type ProductSort = 'interactions' | 'views' | 'clicks' | 'conversions' | 'revenue';

export interface ProductTotalsRow {
  product_id: string;
  interactions: number;
  assistant: number;
  search: number;
  training: number;
  agent: number;
  views: number;
  clicks: number;
  conversions: number;
  revenue_minor: number;
}

/**
 * A page of products with activity in [start, end], by a total descending, then by id, and
 * how many products had activity. Names are not read here (productNames): they change with the
 * catalogue, the totals only with the rollups.
 */
export async function productTotalsPage(
  db: Executor,
  start: string,
  end: string,
  page: { sort: ProductSort; limit: number; offset: number },
): Promise<{ rows: ProductTotalsRow[]; total: number }> {
  const column = page.sort === 'revenue' ? 'revenue_minor' : page.sort;
  const [rows, count] = await Promise.all([
    db
      .selectFrom('analytics_daily_products')
      .select((eb) => ['product_id', ...PRODUCT_COUNTS.map((c) => eb.fn.sum<number>(c).as(c))])
      .where('day', '>=', start)
      .where('day', '<=', end)
      .groupBy('product_id')
      .orderBy(column, 'desc')
      .orderBy('product_id')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom('analytics_daily_products')
      .select((eb) => eb.fn.count<number>('product_id').distinct().as('n'))
      .where('day', '>=', start)
      .where('day', '<=', end)
      .executeTakeFirst(),
  ]);
  return {
    rows: rows.map((r) => ({
      product_id: r.product_id,
      interactions: Number(r.interactions),
      assistant: Number(r.assistant),
      search: Number(r.search),
      training: Number(r.training),
      agent: Number(r.agent),
      views: Number(r.views),
      clicks: Number(r.clicks),
      conversions: Number(r.conversions),
      revenue_minor: Number(r.revenue_minor),
    })),
    total: Number(count?.n ?? 0),
  };
}

/** The names of these products now (a deleted product is absent). */
export async function productNames(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (let i = 0; i < ids.length; i += KEY_CHUNK) {
    const rows = await db
      .selectFrom('products')
      .select(['id', 'name'])
      .where('id', 'in', ids.slice(i, i + KEY_CHUNK))
      .execute();
    for (const r of rows) names.set(r.id, r.name);
  }
  return names;
}

/** Conversions in currencies other than `currency`, per product of `ids`, in [start, end]. */
export async function otherCurrencyRevenue(
  db: Executor,
  start: string,
  end: string,
  currency: string,
  ids: string[],
): Promise<{ product_id: string; currency: string; conversions: number; amount_minor: number }[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('analytics_daily_revenue')
    .select((eb) => [
      'product_id',
      'currency',
      eb.fn.sum<number>('conversions').as('conversions'),
      eb.fn.sum<number>('amount_minor').as('amount_minor'),
    ])
    .where('day', '>=', start)
    .where('day', '<=', end)
    .where('currency', '!=', currency)
    .where('product_id', 'in', ids)
    .groupBy(['product_id', 'currency'])
    .execute();
  return rows.map((r) => ({
    product_id: r.product_id,
    currency: r.currency,
    conversions: Number(r.conversions),
    amount_minor: Number(r.amount_minor),
  }));
}
