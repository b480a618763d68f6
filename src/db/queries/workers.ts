import type { Executor } from '../transaction.js';

/** Writes (or refreshes) a worker's row: alive until `expiresAt`. */
export async function beatWorker(
  db: Executor,
  id: string,
  at: string,
  expiresAt: string,
): Promise<void> {
  await db
    .insertInto('workers')
    .values({ id, started_at: at, beat_at: at, expires_at: expiresAt })
    .onConflict((oc) => oc.column('id').doUpdateSet({ beat_at: at, expires_at: expiresAt }))
    .execute();
}

/** The workers alive at `at` (not expired), by id. */
export async function listLiveWorkerIds(db: Executor, at: string): Promise<string[]> {
  const rows = await db
    .selectFrom('workers')
    .select('id')
    .where('expires_at', '>', at)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Removes a worker's row (it stopped, or it is known dead). */
export async function deleteWorkers(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('workers').where('id', 'in', ids).execute();
}

/** Removes the rows of workers that expired before `before`. */
export async function purgeExpiredWorkers(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('workers').where('expires_at', '<', before).execute();
}
