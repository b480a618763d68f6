import type { Db } from '../../db/store.js';
import type { ReportRow } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import {
  countReports,
  deleteReportRow,
  findReportById,
  insertReportRow,
  listReportRows,
  type ReportListFilter,
} from '../../db/queries/reports.js';
import { storedTimestamp } from '../../db/timestamps.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { announceChange } from '../changes.js';
import { presentPagination } from '../pagination.js';
import { REPORT_CONTENT_TYPES, removeReportFile } from './files.js';
import { resolvePeriod, type ReportPeriod } from './period.js';
import type { Report, ReportCreateInput } from './schemas.js';

/** Seconds a client is told to wait before asking again for a report still pending. */
const PENDING_RETRY_SECONDS = 2;

/** The report as the API returns it. */
export function presentReport(row: ReportRow, baseUrl: string): Report {
  return {
    id: row.id,
    type: row.type,
    format: row.format,
    status: row.status,
    start_date: row.start_date,
    end_date: row.end_date,
    file_name: row.file_name,
    content_type: row.content_type,
    bytes: row.bytes === null ? null : Number(row.bytes),
    download_url: row.status === 'ready' ? `${baseUrl}/v1/reports/${row.id}/download` : null,
    failure_reason: row.failure_reason,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

/** The name a download gets: agentshelf-<type>-<start>_<end>.<format>, or the creation day. */
export function reportFileName(
  type: ReportRow['type'],
  format: ReportRow['format'],
  period: ReportPeriod | undefined,
  now: Date,
): string {
  const name = type.replace('_', '-');
  const when = period ? `${period.start}_${period.end}` : now.toISOString().slice(0, 10);
  return `agentshelf-${name}-${when}.${format}`;
}

/**
 * Records a report to generate (status pending); the report worker picks it up after
 * commit. feed_diagnostics describes the feeds as they are now, so it takes no period.
 */
export async function createReport(
  db: Executor,
  input: ReportCreateInput,
  baseUrl: string,
  now: Date,
): Promise<Report> {
  let period: ReportPeriod | undefined;
  if (input.type === 'feed_diagnostics') {
    const field = input.start_date !== undefined ? 'start_date' : 'end_date';
    if (input.start_date !== undefined || input.end_date !== undefined) {
      throw new AppError(
        'invalid_field',
        `${field} does not apply to feed_diagnostics reports, which describe the feeds as they are now.`,
        { field, reason: 'does not apply to feed_diagnostics reports' },
      );
    }
  } else {
    const resolved = resolvePeriod(input, now);
    if ('field' in resolved) {
      throw new AppError('invalid_field', `${resolved.field} ${resolved.reason}.`, resolved);
    }
    period = resolved;
  }
  const row: ReportRow = {
    id: newId('rpt'),
    type: input.type,
    format: input.format,
    status: 'pending',
    failure_reason: null,
    start_date: period?.start ?? null,
    end_date: period?.end ?? null,
    file_name: reportFileName(input.type, input.format, period, now),
    bytes: null,
    content_type: REPORT_CONTENT_TYPES[input.format],
    attempts: 0,
    started_at: null,
    created_at: storedTimestamp(now),
    finished_at: null,
  };
  await insertReportRow(db, row);
  announceChange(db, 'reportsChanged');
  return presentReport(row, baseUrl);
}

export async function getReport(db: Db, id: string, baseUrl: string): Promise<Report> {
  const row = await findReportById(db, id);
  if (!row) throw notFound('report', id);
  return presentReport(row, baseUrl);
}

export async function listReports(
  db: Db,
  filter: ReportListFilter,
  page: { limit: number; offset: number },
  baseUrl: string,
) {
  const rows = await listReportRows(db, filter, page);
  const total = await countReports(db, filter);
  return {
    reports: rows.map((r) => presentReport(r, baseUrl)),
    pagination: presentPagination(page, rows.length, total),
  };
}

/**
 * The report whose file a download serves: 404 when unknown, 409 while pending (with
 * Retry-After) or failed (with its reason).
 */
export async function findReadyReport(db: Db, id: string): Promise<ReportRow> {
  const row = await findReportById(db, id);
  if (!row) throw notFound('report', id);
  if (row.status === 'pending') {
    throw new AppError('conflict', `Report '${id}' is still being generated; retry shortly.`, {
      field: 'status',
      reason: 'pending',
      retryAfter: PENDING_RETRY_SECONDS,
    });
  }
  if (row.status === 'failed') {
    throw new AppError(
      'conflict',
      `Report '${id}' failed (${row.failure_reason ?? 'no reason recorded'}); create a new one.`,
      { field: 'status', reason: 'failed' },
    );
  }
  return row;
}

/**
 * Deletes a report and its file. A generation under way notices when it finishes (its row is
 * gone) and removes the file it wrote.
 */
export async function deleteReport(db: Db, id: string, dataDir: string): Promise<void> {
  const row = await findReportById(db, id);
  if (!row || !(await deleteReportRow(db, id))) throw notFound('report', id);
  await removeReportFile(dataDir, id, row.format);
}
