import { insertValuesInChunks } from '../insert-in-chunks.js';
import type { AuditLogRow } from '../schema.js';
import type { Db } from '../store.js';

/** The audit log's columns, in the order of AuditLogValues. */
export const AUDIT_LOG_COLUMNS = [
  'created_at',
  'api_key_id',
  'method',
  'path',
  'status',
  'request_id',
  'client_ip',
] as const;

/** An entry's column values, in the order of AUDIT_LOG_COLUMNS (the writer thread's form). */
export type AuditLogValues = [
  created_at: string,
  api_key_id: string,
  method: string,
  path: string,
  status: number,
  request_id: string,
  client_ip: string | null,
];

/** Writes entries, given as column values, in one transaction. */
export async function insertAuditLogValues(db: Db, rows: AuditLogValues[]): Promise<void> {
  if (rows.length === 0) return;
  // 7 parameters a row; 400 rows a statement was measured the cheapest per row.
  await db
    .transaction()
    .execute((trx) =>
      insertValuesInChunks(trx, 'audit_log', AUDIT_LOG_COLUMNS, rows, { maxRows: 400 }),
    );
}

export interface AuditLogFilter {
  keyId?: string;
  /** created_at at or after (ISO-8601 UTC). */
  since?: string;
  /** created_at before (ISO-8601 UTC). */
  until?: string;
  /** status in [min, max). */
  status?: { min: number; max: number };
  limit: number;
  offset: number;
}

/** Newest first, and how many entries match in all. */
export async function selectAuditLogPage(
  db: Db,
  filter: AuditLogFilter,
): Promise<{ rows: AuditLogRow[]; total: number }> {
  let q = db.selectFrom('audit_log');
  if (filter.keyId) q = q.where('api_key_id', '=', filter.keyId);
  if (filter.since) q = q.where('created_at', '>=', filter.since);
  if (filter.until) q = q.where('created_at', '<', filter.until);
  if (filter.status) {
    q = q.where('status', '>=', filter.status.min).where('status', '<', filter.status.max);
  }
  const [rows, count] = await Promise.all([
    q
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
  ]);
  return { rows, total: Number(count?.n ?? 0) };
}

/** Deletes up to `limit` of the oldest entries before `cutoff`; returns how many went. */
export async function deleteAuditLogBefore(db: Db, cutoff: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('audit_log')
    .where(
      'id',
      'in',
      db
        .selectFrom('audit_log')
        .select('id')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
