/**
 * What agents searched the UCP catalog for (issue 23): each search is added, by day and
 * query, to the analytics_daily_searches rollup in the transaction that records its request;
 * GET /v1/analytics/searches ranks the queries of a period, and the ones that found nothing.
 */
import {
  addSearchDays,
  topSearches,
  type SearchTotal,
} from '../../db/queries/analytics-searches.js';
import type { AnalyticsDailySearchTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { keptText } from '../../text.js';
import type { AccessRecord } from './access-record.js';
import type { Period } from './metrics.js';

/** Longest query kept (characters); a longer one is counted by its start. */
export const MAX_RECORDED_QUERY = 200;

/** A query as it is counted: lower-cased, spaces collapsed, trimmed, at most 200 characters. */
export function countedQuery(query: string): string {
  return keptText(
    query.normalize('NFC').toLowerCase().replace(/\s+/gu, ' ').trim(),
    MAX_RECORDED_QUERY,
  ).trim();
}

/** What the records' searches add to the rollup, one row per day and query. */
export function searchRollups(records: readonly AccessRecord[]): AnalyticsDailySearchTable[] {
  const rows = new Map<string, AnalyticsDailySearchTable>();
  for (const r of records) {
    if (!r.search) continue;
    const query = countedQuery(r.search.query);
    if (query === '') continue;
    const day = r.at.toISOString().slice(0, 10);
    const key = `${day}\u0000${query}`;
    const row = rows.get(key) ?? { day, query, searches: 0, no_results: 0 };
    row.searches++;
    if (r.search.results === 0) row.no_results++;
    rows.set(key, row);
  }
  return [...rows.values()];
}

/** Adds the records' searches to the rollup (in the caller's transaction). */
export async function recordSearches(
  db: Executor,
  records: readonly AccessRecord[],
): Promise<void> {
  await addSearchDays(db, searchRollups(records));
}

export interface SearchAnalytics {
  /** The queries searched most, most first. */
  top_queries: SearchTotal[];
  /** The queries that found nothing most often, most first. */
  top_without_results: SearchTotal[];
}

/** The top queries of a period, and the top queries that found nothing. */
export async function searchAnalytics(
  db: Executor,
  period: Period,
  limit: number,
): Promise<SearchAnalytics> {
  const [top, empty] = await Promise.all([
    topSearches(db, period, { limit, withoutResults: false }),
    topSearches(db, period, { limit, withoutResults: true }),
  ]);
  return { top_queries: top, top_without_results: empty };
}
