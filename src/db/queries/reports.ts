import type { Executor } from '../transaction.js';
import type {
  ReportFormat,
  ReportRow,
  ReportRowUpdate,
  ReportStatus,
  ReportTable,
  ReportType,
} from '../schema.js';
import type { Insertable } from 'kysely';
import type { FeedRow } from '../schema.js';
import { CATALOGUE_COLUMNS, type CatalogueRow } from './products.js';
import { PRODUCT_COUNTS } from './analytics.js';

export interface ReportListFilter {
  type?: ReportType | undefined;
  format?: ReportFormat | undefined;
  status?: ReportStatus | undefined;
}

export async function insertReportRow(db: Executor, row: Insertable<ReportTable>): Promise<void> {
  await db.insertInto('reports').values(row).execute();
}

export async function findReportById(db: Executor, id: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
}

function filteredReports(db: Executor, filter: ReportListFilter) {
  let q = db.selectFrom('reports');
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.format) q = q.where('format', '=', filter.format);
  if (filter.status) q = q.where('status', '=', filter.status);
  return q;
}

/** A page of reports, newest first. */
export async function listReportRows(
  db: Executor,
  filter: ReportListFilter,
  page: { limit: number; offset: number },
): Promise<ReportRow[]> {
  return filteredReports(db, filter)
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countReports(db: Executor, filter: ReportListFilter): Promise<number> {
  const row = await filteredReports(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Changes a report; returns whether it still existed. */
export async function updateReportRow(
  db: Executor,
  id: string,
  patch: ReportRowUpdate,
): Promise<boolean> {
  const result = await db.updateTable('reports').set(patch).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteReportRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('reports').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The oldest pending report, if any. */
export async function findOldestPendingReport(db: Executor): Promise<ReportRow | undefined> {
  return db
    .selectFrom('reports')
    .selectAll()
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Marks a pending report as started (attempts + 1) unless another worker did first: the
 * update only matches the attempt count this worker read. Returns whether it is ours.
 */
export async function claimReport(
  db: Executor,
  row: Pick<ReportRow, 'id' | 'attempts'>,
  startedAt: string,
): Promise<boolean> {
  const result = await db
    .updateTable('reports')
    .set({ attempts: row.attempts + 1, started_at: startedAt })
    .where('id', '=', row.id)
    .where('status', '=', 'pending')
    .where('attempts', '=', row.attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every report id with its format (the worker removes files no report owns). */
export async function listReportFiles(db: Executor) {
  return db.selectFrom('reports').select(['id', 'format', 'status']).execute();
}

/**
 * One page of the whole catalogue (every status) in creation order after a cursor: keyset
 * paging on the (created_at, id) index, so a report reads any catalogue a page at a time.
 */
export async function listCatalogueReportPage(
  db: Executor,
  after: { created_at: string; id: string } | undefined,
  limit: number,
): Promise<CatalogueRow[]> {
  let q = db.selectFrom('products').select(CATALOGUE_COLUMNS);
  if (after) {
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)),
    );
  }
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** Every feed, oldest first (a store has a handful). */
export async function listAllFeedRows(db: Executor): Promise<FeedRow[]> {
  return db.selectFrom('feeds').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Per-product analytics totals in [start, end] for these ids (ids without activity are absent). */
export async function productTotalsForIds(
  db: Executor,
  start: string,
  end: string,
  ids: readonly string[],
): Promise<Map<string, Record<(typeof PRODUCT_COUNTS)[number], number>>> {
  const totals = new Map<string, Record<(typeof PRODUCT_COUNTS)[number], number>>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('analytics_daily_products')
      .select((eb) => ['product_id', ...PRODUCT_COUNTS.map((c) => eb.fn.sum<number>(c).as(c))])
      .where('day', '>=', start)
      .where('day', '<=', end)
      .where('product_id', 'in', ids.slice(i, i + 500))
      .groupBy('product_id')
      .execute();
    for (const r of rows) {
      const counts = {} as Record<(typeof PRODUCT_COUNTS)[number], number>;
      for (const c of PRODUCT_COUNTS) counts[c] = Number(r[c]);
      totals.set(r.product_id, counts);
    }
  }
  return totals;
}
