import { z } from 'zod';
import type { Db } from '../../db/store.js';
import {
  AUDIT_LOG_COLUMNS,
  selectAuditLogPage,
  type AuditLogFilter as AuditLogRowFilter,
} from '../../db/queries/audit-log.js';
import type { AuditLogRow, NewAuditLogRow } from '../../db/schema.js';
import { insertAuditValues, type AuditValues } from './writes.js';
import { pageFields } from '../pagination.js';

export const AuditEntry = z.object({
  id: z.int(),
  time: z.string(),
  key_id: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.int(),
  request_id: z.string(),
  client_ip: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Date.parse reads 2026-11-31 as December 1st; refuse days the month does not have. */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(y, m - 1, d));
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

/**
 * A date (`2026-11-21`, a whole UTC day) or a date-time with a zone, as an ISO string in UTC.
 * `end` makes a bare date mean the end of that day, so `until=2026-11-21` includes the 21st.
 */
function queryDate(end: boolean) {
  return z
    .string()
    .check((ctx) => {
      const v = ctx.value;
      if (
        (!DATE.test(v) && !DATE_TIME.test(v)) ||
        !isCalendarDate(v) ||
        Number.isNaN(Date.parse(v))
      ) {
        ctx.issues.push({
          code: 'custom',
          input: v,
          message: 'must be a date (2026-11-21) or a date-time with a zone (2026-11-21T10:00:00Z)',
        });
      }
    })
    .transform((v) => {
      const ms = Date.parse(DATE.test(v) ? `${v}T00:00:00Z` : v);
      return new Date(DATE.test(v) && end ? ms + 86_400_000 : ms).toISOString();
    });
}

/** The audit log's filter and page, without the check across fields (see AuditLogQuery). */
export const AuditLogFilter = z.strictObject({
  key_id: z.string().min(1).max(200).optional(),
  since: queryDate(false).optional(),
  until: queryDate(true).optional(),
  status: z
    .string()
    .regex(/^([1-5]\d\d|[1-5]xx)$/, 'must be a status code (429) or a class (4xx)')
    .optional(),
  ...pageFields,
});

/** Adds the check that `until`, when given with `since`, comes after it. */
export function untilAfterSince<T extends z.ZodType<{ since?: string; until?: string }>>(
  schema: T,
) {
  return schema.refine((q) => !q.since || !q.until || q.since < q.until, {
    message: 'must be after since',
    path: ['until'],
  });
}

export const AuditLogQuery = untilAfterSince(AuditLogFilter);
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;

export const AuditLogPage = z.object({
  entries: z.array(AuditEntry),
  pagination: z.object({
    limit: z.int(),
    offset: z.int(),
    total: z.int(),
    has_more: z.boolean(),
  }),
});
export type AuditLogPage = z.infer<typeof AuditLogPage>;

export function presentAuditEntry(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    time: row.created_at,
    key_id: row.api_key_id,
    method: row.method,
    path: row.path,
    status: row.status,
    request_id: row.request_id,
    client_ip: row.client_ip,
  };
}

/** Writes entries in one transaction. */
export async function insertAuditEntries(db: Db, rows: NewAuditLogRow[]): Promise<void> {
  await insertAuditValues(
    db,
    rows.map((r) => AUDIT_LOG_COLUMNS.map((c) => r[c] ?? null) as AuditValues),
  );
}

/** Newest first, filtered as the query says. */
export async function listAuditLog(db: Db, query: AuditLogQuery): Promise<AuditLogPage> {
  let status: AuditLogRowFilter['status'];
  if (query.status?.endsWith('xx')) {
    const base = Number(query.status[0]) * 100;
    status = { min: base, max: base + 100 };
  } else if (query.status) {
    status = { min: Number(query.status), max: Number(query.status) + 1 };
  }
  const { rows, total } = await selectAuditLogPage(db, {
    ...(query.key_id ? { keyId: query.key_id } : {}),
    ...(query.since ? { since: query.since } : {}),
    ...(query.until ? { until: query.until } : {}),
    ...(status ? { status } : {}),
    limit: query.limit,
    offset: query.offset,
  });
  return {
    entries: rows.map(presentAuditEntry),
    pagination: {
      limit: query.limit,
      offset: query.offset,
      total,
      has_more: query.offset + rows.length < total,
    },
  };
}
