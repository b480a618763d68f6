import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchGroupRow, SearchPage } from '../dialect.js';

/**
 * PostgreSQL's full-text search: the weighted tsvector of a product, written exactly as the
 * GIN index products_search of migration 20261127060000_product_search (partial on active
 * products), so the planner serves the match from the index.
 */
const DOCUMENT = sql.raw(`(
      setweight(to_tsvector('english'::regconfig, name), 'A') ||
      setweight(to_tsvector('english'::regconfig, coalesce(brand, '')), 'B') ||
      setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C') ||
      setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'D')
    )`);

/** Weights of D, C, B, A (description, category, brand, name), as ts_rank takes them. */
const WEIGHTS = '{0.1, 0.2, 0.4, 1.0}';

/**
 * A tsquery text matching any of the terms. The terms are words of letters and digits alone
 * (domain/ucp/query.ts), so none of them is tsquery syntax.
 */
export function tsQueryText(terms: readonly string[]): string {
  return terms.join(' | ');
}

/** The (brand, variant group) of the active products matching any term, best first (ts_rank). */
export function pgSearchGroups(
  terms: readonly string[],
  filter: RawBuilder<SqlBool>,
  page: SearchPage,
): RawBuilder<SearchGroupRow> {
  const best =
    page.maxHits === undefined ? sql`` : sql`order by hit_score desc limit ${page.maxHits}`;
  return sql<SearchGroupRow>`select brand, group_key, max(hit_score) as score
    from (
      select brand, coalesce((attributes::jsonb ->> 'item_group_id'), id) as group_key,
        ts_rank(${WEIGHTS}::float4[], ${DOCUMENT}, query) as hit_score
      from products, to_tsquery('english'::regconfig, ${tsQueryText(terms)}) query
      where status = 'active' and ${DOCUMENT} @@ query and ${filter}
      ${best}
    ) as hits
    group by 1, 2
    order by score desc, group_key, coalesce(brand, '')
    limit ${page.limit} offset ${page.offset}`;
}
