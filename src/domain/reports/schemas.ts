import { z } from 'zod';
import { pageFields } from '../pagination.js';
import { Pagination } from '../products/schemas.js';
import { utcDayOf } from './period.js';

export const REPORT_TYPES = ['analytics', 'products', 'feed_diagnostics'] as const;
export const ReportType = z.enum(REPORT_TYPES);
export const REPORT_FORMATS = ['csv', 'json', 'html'] as const;
export const ReportFormat = z.enum(REPORT_FORMATS);
export const REPORT_STATUSES = ['pending', 'ready', 'failed'] as const;
export const ReportStatus = z.enum(REPORT_STATUSES);

/** A date (`2026-11-01`) or a date-time (`2026-11-01T12:00:00Z`), read as its UTC day. */
export const ReportDate = z.string().check((ctx) => {
  if (utcDayOf(ctx.value) === undefined) {
    ctx.issues.push({
      code: 'custom',
      input: ctx.value,
      message: 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time',
    });
  }
});

export const ReportCreate = z.strictObject({
  type: ReportType,
  format: ReportFormat,
  start_date: ReportDate.optional(),
  end_date: ReportDate.optional(),
});
export type ReportCreateInput = z.infer<typeof ReportCreate>;

export const ReportListQuery = z.strictObject({
  type: ReportType.optional(),
  format: ReportFormat.optional(),
  status: ReportStatus.optional(),
  ...pageFields,
});
export type ReportListQuery = z.infer<typeof ReportListQuery>;

export const Report = z.object({
  id: z.string(),
  type: ReportType,
  format: ReportFormat,
  status: ReportStatus,
  start_date: z.string().nullable(),
  end_date: z.string().nullable(),
  file_name: z.string(),
  content_type: z.string(),
  bytes: z.int().nullable(),
  download_url: z.string().nullable(),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type Report = z.infer<typeof Report>;

export const ReportList = z.object({ reports: z.array(Report), pagination: Pagination });
