import { insertInChunks } from '../insert-in-chunks.js';
import type { AuditLogRow, NewAuditLogRow } from '../schema.js';
import type { Db } from '../store.js';

/** Writes entries in one transaction. */
export async function insertAuditLogRows(db: Db, rows: NewAuditLogRow[]): Promise<void> {
  if (rows.length === 0) return;
  // 7 parameters a row; 400 rows a statement was measured the cheapest per row.
  await db.transaction().execute((trx) => insertInChunks(trx, 'audit_log', rows, { maxRows: 400 }));
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
