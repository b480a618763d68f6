import type { AnalyticsDailySearchTable } from '../schema.js';
import type { Executor } from '../transaction.js';
import { addToRollup } from './analytics.js';

/** Adds searches to the daily search rollup (one row per day and query). */
export async function addSearchDays(
  db: Executor,
  rows: readonly AnalyticsDailySearchTable[],
): Promise<void> {
  await addToRollup(
    db,
    'analytics_daily_searches',
    ['day', 'query'],
    ['searches', 'no_results'],
    rows,
  );
}

/** A query with its totals over a period. */
export interface SearchTotal {
  query: string;
  searches: number;
  no_results: number;
}

/**
 * The queries searched most from `start` to `end` (days, inclusive), most first, then by
 * query; `withoutResults` ranks by the searches that found nothing, and keeps only those.
 */
export async function topSearches(
  db: Executor,
  period: { start: string; end: string },
  options: { limit: number; withoutResults: boolean },
): Promise<SearchTotal[]> {
  const rank = options.withoutResults ? 'no_results' : 'searches';
  const rows = await db
    .selectFrom('analytics_daily_searches')
    .select((eb) => [
      'query',
      eb.fn.sum<number>('searches').as('searches'),
      eb.fn.sum<number>('no_results').as('no_results'),
    ])
    .where('day', '>=', period.start)
    .where('day', '<=', period.end)
    .groupBy('query')
    .$if(options.withoutResults, (q) => q.having((eb) => eb.fn.sum('no_results'), '>', 0))
    .orderBy(rank, 'desc')
    .orderBy('query')
    .limit(options.limit)
    .execute();
  return rows.map((r) => ({
    query: r.query,
    searches: Number(r.searches),
    no_results: Number(r.no_results),
  }));
}
