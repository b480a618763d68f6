import type { Insertable } from 'kysely';
import type {
  PublicationRow,
  PublicationRowUpdate,
  PublicationStatus,
  PublicationTable,
} from '../schema.js';
import type { Executor } from '../transaction.js';

export interface PublicationListFilter {
  status?: PublicationStatus | undefined;
}

export async function insertPublicationRow(
  db: Executor,
  row: Insertable<PublicationTable>,
): Promise<void> {
  await db.insertInto('publications').values(row).execute();
}

export async function updatePublicationRow(
  db: Executor,
  id: string,
  patch: PublicationRowUpdate,
): Promise<void> {
  await db.updateTable('publications').set(patch).where('id', '=', id).execute();
}

/**
 * Marks publications still `running` as interrupted (their process died: call while holding
 * the pipeline lock, which every publication runs under); returns how many there were.
 */
export async function interruptRunningPublications(db: Executor, at: string): Promise<number> {
  const result = await db
    .updateTable('publications')
    .set({ status: 'interrupted', finished_at: at, error: 'the process stopped during the upload' })
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

function filtered(db: Executor, filter: PublicationListFilter) {
  let q = db.selectFrom('publications');
  if (filter.status) q = q.where('status', '=', filter.status);
  return q;
}

/** A page of publications, newest first. */
export async function listPublicationRows(
  db: Executor,
  filter: PublicationListFilter,
  page: { limit: number; offset: number },
): Promise<PublicationRow[]> {
  return filtered(db, filter)
    .selectAll()
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countPublications(
  db: Executor,
  filter: PublicationListFilter,
): Promise<number> {
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Publications whose CDN purge is pending and due (oldest first). */
export async function selectDuePurges(
  db: Executor,
  now: string,
  limit: number,
): Promise<Pick<PublicationRow, 'id' | 'purge_urls' | 'purge_attempts'>[]> {
  return db
    .selectFrom('publications')
    .select(['id', 'purge_urls', 'purge_attempts'])
    .where('purge_status', '=', 'pending')
    .where('purge_next_at', '<=', now)
    .orderBy('purge_next_at')
    .limit(limit)
    .execute();
}
