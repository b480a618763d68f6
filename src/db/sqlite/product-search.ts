import { sql, type QueryExecutorProvider, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchGroupRow, SearchPage, SearchWords } from '../dialect.js';

/**
 * SQLite's full-text search: the FTS5 table product_search, kept by triggers on products (only
 * active products are in it; migrations 20261127060000_product_search and
 * 20261127095000_product_search_groups), which also holds each product's variant group
 * (group_brand, group_key, unindexed).
 */

/** The rank: bm25 with column weights in the table's order (name, description, brand, category). */
const WEIGHTS = '10.0, 1.0, 4.0, 2.0';
const RANK = `bm25(${WEIGHTS})`;

/**
 * An FTS5 query matching each of the terms or any. Each term is a quoted string, so nothing in
 * it is FTS5 syntax (`NEAR`, `*`, `-`, `AND` are words like any other); a quote is doubled.
 */
export function fts5Query({ terms, match }: SearchWords): string {
  return terms
    .map((t) => `"${t.replaceAll('"', '""')}"`)
    .join(match === 'every' ? ' AND ' : ' OR ');
}

/**
 * The (brand, variant group) of the products matching the words, best first (bm25). The rank
 * is read where the FTS5 table is queried (SQLite allows its auxiliary functions nowhere
 * else, so not inside the aggregate): the hits are materialised first, then grouped. Without
 * a filter (`undefined`: every active product) the hits are grouped from the index alone;
 * with one, each hit's product is read to apply it.
 */
export function sqliteSearchGroups(
  words: SearchWords,
  filter: RawBuilder<SqlBool> | undefined,
  page: SearchPage,
): RawBuilder<SearchGroupRow> {
  const match = fts5Query(words);
  const every = sql`select rowid as hit_rowid, group_brand, group_key,
      -bm25(product_search, ${sql.raw(WEIGHTS)}) as hit_score
    from product_search where product_search match ${match}`;
  let hits = every;
  if (page.maxHits !== undefined) {
    // Past maxHits matches, FTS5's own top-N sort (`order by rank limit`, `rank match` setting
    // the weights) keeps the best; below, that sort costs more than the ranking itself, so
    // every hit is ranked as it comes. A count that stops after maxHits + 1 says which; the
    // sorted half is behind a one-row gate, as FTS5 would sort before any other test.
    const over = sql`(select count(*) from (select 1 from product_search
      where product_search match ${match} limit ${page.maxHits + 1})) > ${page.maxHits}`;
    hits = sql`${every} and not ${over}
      union all
      select * from (
        select product_search.rowid as hit_rowid, group_brand, group_key, -rank as hit_score
        from (select 1 where ${over}) as gate cross join product_search
        where product_search match ${match} and rank match ${RANK}
        order by rank limit ${page.maxHits}
      )`;
  }
  // `cross join`: SQLite's way to keep the join order, hits first, each product by its rowid
  // (else it may walk every active product and probe the hits).
  const filtered =
    filter === undefined
      ? sql``
      : sql`cross join products on products.rowid = hits.hit_rowid where ${filter}`;
  return sql<SearchGroupRow>`with hits as materialized (${hits})
    select group_brand as brand, group_key, max(hit_score) as score
    from hits ${filtered}
    group by 1, 2
    order by score desc, group_key, coalesce(group_brand, '')
    limit ${page.limit} offset ${page.offset}`;
}

/** The table and its shadow tables (FTS5 keeps the index in `product_search_*`). */
export function isSqliteSearchTable(name: string): boolean {
  return name === 'product_search' || name.startsWith('product_search_');
}

/** Fills the search index again from the products table (after `store copy`). */
export async function rebuildSqliteSearch(db: QueryExecutorProvider): Promise<void> {
  await sql`insert into product_search (product_search) values ('delete-all')`.execute(db);
  await sql`insert into product_search (rowid, name_text, description_text, brand_text,
      category_text, group_brand, group_key)
    select rowid, name, coalesce(description, ''), coalesce(brand, ''), coalesce(category, ''),
      brand, coalesce(json_extract(attributes, '$.item_group_id'), id)
    from products where status = 'active'`.execute(db);
}
