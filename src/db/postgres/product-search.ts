import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchGroupRow, SearchPage, SearchWords } from '../dialect.js';

/**
 * PostgreSQL's full-text search over `search_vector`, the weighted tsvector of a product that
 * PostgreSQL stores as a generated column (migration 20261127092500_product_search_vector),
 * with its GIN index products_search_vector, partial on active products: the match is read
 * from the index and ranked on the stored vector, not built again from the row's columns.
 */

/** Weights of D, C, B, A (description, category, brand, name), as ts_rank takes them. */
const WEIGHTS = '{0.1, 0.2, 0.4, 1.0}';

/**
 * A tsquery text matching each of the terms or any. The terms are words of letters and digits
 * alone (domain/ucp/query.ts), so none of them is tsquery syntax.
 */
export function tsQueryText({ terms, match }: SearchWords): string {
  return terms.join(match === 'every' ? ' & ' : ' | ');
}

/** The (brand, variant group) of the active products matching the words, best first (ts_rank). */
export function pgSearchGroups(
  words: SearchWords,
  filter: RawBuilder<SqlBool> | undefined,
  page: SearchPage,
): RawBuilder<SearchGroupRow> {
  const best =
    page.maxHits === undefined ? sql`` : sql`order by hit_score desc limit ${page.maxHits}`;
  return sql<SearchGroupRow>`select brand, group_key, max(hit_score) as score
    from (
      select brand, coalesce((attributes::jsonb ->> 'item_group_id'), id) as group_key,
        ts_rank(${WEIGHTS}::float4[], search_vector, query) as hit_score
      from products, to_tsquery('english'::regconfig, ${tsQueryText(words)}) query
      where status = 'active' and search_vector @@ query and ${filter ?? sql`true`}
      ${best}
    ) as hits
    group by 1, 2
    order by score desc, group_key, coalesce(brand, '')
    limit ${page.limit} offset ${page.offset}`;
}

/** Columns PostgreSQL computes itself (a generated column cannot be written). */
export function isPgDerivedColumn(table: string, column: string): boolean {
  return table === 'products' && column === 'search_vector';
}
