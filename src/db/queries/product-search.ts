import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { dialectOf, type SearchGroupRow, type SearchPage, type SearchWords } from '../dialect.js';
import type { Executor } from '../transaction.js';
import { CATALOGUE_COLUMNS, inCategory, type CatalogueRow } from './products.js';

/** What narrows a catalog search or lookup (UCP search_filters). */
export interface CatalogFilter {
  /** A product matches when it is in any of these categories or below one of them. */
  categories?: readonly string[] | undefined;
  /** Prices in minor units of `currency`; products in another currency do not match. */
  price?: { min?: number | undefined; max?: number | undefined; currency: string } | undefined;
}

/** How many best matches an unfiltered search ranks its groups among. */
export const MAX_HITS = 10_000;

/** A variant group: its brand (null: none given) and its key (item_group_id, else the id). */
export interface GroupRef {
  brand: string | null;
  group_key: string | number;
}

/** A product row of a group, with the group it belongs to. */
export type GroupProductRow = CatalogueRow & { brand: string | null; group_key: string | number };

/** The variant-group key: DialectSql.jsonMember's text, which the products_item_group index is on. */
const itemGroup = (db: Executor) => dialectOf(db).jsonMember('attributes', 'item_group_id');

/** The filter as SQL over the products' columns (true when it narrows nothing). */
export function catalogFilterSql(db: Executor, filter: CatalogFilter): RawBuilder<SqlBool> {
  const parts: RawBuilder<SqlBool>[] = [sql<SqlBool>`status = 'active'`];
  const categories = filter.categories ?? [];
  if (categories.length > 0) {
    const any = categories.map((c) => inCategory(db, c, { useIndex: true }));
    parts.push(sql<SqlBool>`(${sql.join(any, sql` or `)})`);
  }
  const price = filter.price;
  if (price && (price.min !== undefined || price.max !== undefined)) {
    parts.push(sql<SqlBool>`currency = ${price.currency}`);
    if (price.min !== undefined) parts.push(sql<SqlBool>`price_minor >= ${price.min}`);
    if (price.max !== undefined) parts.push(sql<SqlBool>`price_minor <= ${price.max}`);
  }
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/**
 * The variant groups of active products matching the terms (full-text, ranked) and the filter,
 * best first; with no terms, every group the filter lets through, by group key.
 *
 * The products holding every term answer first, alone: "0007 lamps" means the lamps of brand
 * 0007, not everything brand 0007 makes and every lamp, and ranking those instead (167,462 of a
 * million products where every word holds 190) cost 838 ms where 15 ms would do. Only when no
 * product the filter lets through holds every term do the products holding any of them answer
 * (a shopper's "teal kettle" still finds the kettles when none is teal). The choice is the
 * search's, not the page's: every page of one search answers from the same side.
 */
export async function searchProductGroups(
  db: Executor,
  terms: readonly string[],
  filter: CatalogFilter,
  page: SearchPage,
): Promise<SearchGroupRow[]> {
  const where = catalogFilterSql(db, filter);
  if (terms.length === 0) {
    const { rows } =
      await sql<SearchGroupRow>`select brand, coalesce(${itemGroup(db)}, id) as group_key,
          0 as score
        from products where ${where}
        group by 1, 2
        order by group_key, coalesce(brand, '')
        limit ${page.limit} offset ${page.offset}`.execute(db);
    return rows.map((r) => ({ ...r, score: Number(r.score) }));
  }
  // Without filters, rank among the best MAX_HITS matches: a filter applied after them (on
  // SQLite) could leave out a match ranked lower, so a filtered search ranks every match.
  const filtered = (filter.categories?.length ?? 0) > 0 || filter.price !== undefined;
  const search = async (match: SearchWords['match'], at: SearchPage) => {
    const { rows } = await dialectOf(db)
      .searchGroups({ terms, match }, filtered ? where : undefined, {
        ...at,
        maxHits: filtered ? undefined : Math.max(MAX_HITS, at.offset + at.limit),
      })
      .execute(db);
    return rows.map((r) => ({ ...r, score: Number(r.score) }));
  };
  if (terms.length === 1) return search('any', page);
  const every = await search('every', page);
  if (every.length > 0) return every;
  // An empty page past the first: past the end of the every-term side, or no such side.
  if (page.offset > 0 && (await search('every', { limit: 1, offset: 0 })).length > 0) return [];
  return search('any', page);
}

/**
 * The active products of these groups that the filter lets through, by group, then id. One
 * select a group, each read from the products_discovery index (status, brand, group key),
 * whose expression it repeats: an OR of the groups would scan the catalogue instead.
 */
export async function findGroupProducts(
  db: Executor,
  groups: readonly GroupRef[],
  filter: CatalogFilter = {},
): Promise<GroupProductRow[]> {
  if (groups.length === 0) return [];
  const key = sql`coalesce(${itemGroup(db)}, id)`;
  const where = catalogFilterSql(db, filter);
  const columns = sql.join(CATALOGUE_COLUMNS.map((c) => sql.ref(c)));
  const each = groups.map((g) => {
    const brand = g.brand === null ? sql`brand is null` : sql`brand = ${g.brand}`;
    return sql`select ${columns}, brand, ${key} as group_key from products
      where ${where} and ${brand} and ${key} = ${g.group_key}`;
  });
  // Sorted here, not by the select: an ORDER BY over the union has each store sort every
  // branch (SQLite a temporary b-tree each), ten times the selects' own cost at a lookup's
  // ten groups; and code-unit order is one order on both stores, whatever their collation.
  const { rows } = await sql<GroupProductRow>`${sql.join(each, sql` union all `)}`.execute(db);
  return rows.sort(
    (a, b) => compareText(String(a.group_key), String(b.group_key)) || compareText(a.id, b.id),
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The groups that identifiers name: an active product's own id (the group it is in), or a
 * variant group's item_group_id. Each with the identifiers that named it.
 */
export async function findNamedGroups(
  db: Executor,
  ids: readonly string[],
): Promise<
  {
    id: string;
    item_group: string | number | null;
    brand: string | null;
    group_key: string | number;
  }[]
> {
  if (ids.length === 0) return [];
  const group = itemGroup(db);
  const list = sql.join(ids);
  // An expression no index is on, so neither store reads the ids' index together with the
  // status index (every active product): PostgreSQL without statistics yet (a million products
  // loaded, autovacuum not round) ANDed the two bitmaps, 120-230 ms a lookup where the ids'
  // index alone takes 0.5 ms; SQLite chose the status index outright.
  const active = sql`(status || '') = 'active'`;
  // Two selects, each from its own index (the primary key; products_item_group), not an OR
  // of the two, which would scan the catalogue.
  const { rows } = await sql<{
    id: string;
    item_group: string | number | null;
    brand: string | null;
    group_key: string | number;
  }>`select id, ${group} as item_group, brand, coalesce(${group}, id) as group_key
    from products where ${active} and id in (${list})
    union
    select id, ${group} as item_group, brand, coalesce(${group}, id) as group_key
    from products where ${active} and ${group} in (${list})`.execute(db);
  return rows;
}
