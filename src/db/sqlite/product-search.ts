import { sql, type QueryExecutorProvider, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchGroupRow, SearchPage } from '../dialect.js';

/**
 * SQLite's full-text search (the FTS5 table product_search of migration
 * 20261127060000_product_search, kept by triggers on products; only active products are in it).
 */

/** Column weights of bm25, in the table's column order: name, description, brand, category. */
const BM25 = 'bm25(product_search, 10.0, 1.0, 4.0, 2.0)';

/**
 * An FTS5 query matching any of the terms. Each term is a quoted string, so nothing in it is
 * FTS5 syntax (`NEAR`, `*`, `-`, `AND` are words like any other); a quote is doubled.
 */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

/**
 * The (brand, variant group) of the products matching any term, best first (bm25). bm25 is
 * computed where the FTS5 table is queried (SQLite allows its auxiliary functions nowhere
 * else, so not inside the aggregate): the hits are materialised first, then grouped.
 */
export function sqliteSearchGroups(
  terms: readonly string[],
  filter: RawBuilder<SqlBool>,
  page: SearchPage,
): RawBuilder<SearchGroupRow> {
  return sql<SearchGroupRow>`with hits as materialized (
      select rowid as hit_rowid, -${sql.raw(BM25)} as hit_score
      from product_search where product_search match ${fts5Query(terms)}
    )
    select brand, coalesce(json_extract(attributes, '$.item_group_id'), id) as group_key,
      max(hit_score) as score
    from hits join products on products.rowid = hits.hit_rowid
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
