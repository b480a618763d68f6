import { sql, type QueryExecutorProvider, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchGroupRow, SearchPage } from '../dialect.js';

/**
 * SQLite's full-text search (the FTS5 table product_search of migration
 * 20261127060000_product_search, kept by triggers on products; only active products are in it).
 */

/** The rank: bm25 with column weights in the table's order (name, description, brand, category). */
const RANK = 'bm25(10.0, 1.0, 4.0, 2.0)';

/**
 * An FTS5 query matching any of the terms. Each term is a quoted string, so nothing in it is
 * FTS5 syntax (`NEAR`, `*`, `-`, `AND` are words like any other); a quote is doubled.
 */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

/**
 * The (brand, variant group) of the products matching any term, best first (bm25). The rank
 * is read where the FTS5 table is queried (SQLite allows its auxiliary functions nowhere
 * else, so not inside the aggregate): the hits are materialised first, then grouped.
 */
export function sqliteSearchGroups(
  terms: readonly string[],
  filter: RawBuilder<SqlBool>,
  page: SearchPage,
): RawBuilder<SearchGroupRow> {
  // `cross join`: SQLite's way to keep the join order, hits first, each product by its rowid
  // (else it may walk every active product and probe the hits).
  // `rank match` sets the column weights of FTS5's rank, so `order by rank limit` keeps the
  // best hits with FTS5's own top-N sort instead of ordering every match.
  const best = page.maxHits === undefined ? sql`` : sql`order by rank limit ${page.maxHits}`;
  return sql<SearchGroupRow>`with hits as materialized (
      select rowid as hit_rowid, -rank as hit_score
      from product_search
      where product_search match ${fts5Query(terms)} and rank match ${RANK} ${best}
    )
    select brand, coalesce(json_extract(attributes, '$.item_group_id'), id) as group_key,
      max(hit_score) as score
    from hits cross join products on products.rowid = hits.hit_rowid
    where ${filter}
    group by 1, 2
    order by score desc, group_key, coalesce(brand, '')
    limit ${page.limit} offset ${page.offset}`;
}

/** The table and its shadow tables (FTS5 keeps the index in `product_search_*`). */
export function isSqliteSearchTable(name: string): boolean {
  return name === 'product_search' || name.startsWith('product_search_');
}

/** Fills the search index again from the products table (after `store copy`). */
export async function rebuildSqliteSearch(db: QueryExecutorProvider): Promise<void> {
  await sql`insert into product_search (product_search) values ('delete-all')`.execute(db);
  await sql`insert into product_search (rowid, name_text, description_text, brand_text, category_text)
    select rowid, name, coalesce(description, ''), coalesce(brand, ''), coalesce(category, '')
    from products where status = 'active'`.execute(db);
}
