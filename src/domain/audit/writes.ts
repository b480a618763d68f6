/**
 * What the audit writer thread does to the store: insert entries, delete old ones. Apart from
 * log.ts (the API's reading side, with its schemas), so the thread loads no more than these
 * queries need: each module a thread loads is paid again at every server start.
 */
import {
  deleteAuditLogBefore,
  insertAuditLogValues,
  type AuditLogValues,
} from '../../db/queries/audit-log.js';
import { deleteInChunks } from '../../db/delete-in-chunks.js';
import type { Db } from '../../db/store.js';

/** An entry's column values, in the order of the audit log's columns. */
export type AuditValues = AuditLogValues;

/** Writes entries, given as column values, in one transaction. */
export async function insertAuditValues(db: Db, rows: AuditValues[]): Promise<void> {
  await insertAuditLogValues(db, rows);
}

/** Deletes entries older than `before`, in chunks (deleteInChunks). Returns how many went. */
export async function sweepAuditLog(db: Db, before: Date, chunk = 5000): Promise<number> {
  const cutoff = before.toISOString();
  return deleteInChunks((n) => deleteAuditLogBefore(db, cutoff, n), chunk);
}
