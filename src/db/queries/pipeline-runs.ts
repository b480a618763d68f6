import type { Insertable } from 'kysely';
import type { PipelineRunRow, PipelineRunTable } from '../schema.js';
import type { Db } from '../store.js';

/** Marks runs still `running` as interrupted (call while holding the pipeline lock). */
/** Marks every run still "running" as interrupted; returns how many there were. */
export async function interruptRunningPipelineRuns(db: Db, finishedAt: string): Promise<number> {
  const result = await db
    .updateTable('pipeline_runs')
    .set({ status: 'interrupted', finished_at: finishedAt })
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Records a run; returns its id. */
export async function insertPipelineRun(
  db: Db,
  row: Insertable<PipelineRunTable>,
): Promise<number> {
  const inserted = await db
    .insertInto('pipeline_runs')
    .values(row)
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(inserted.id);
}

export async function finishPipelineRun(
  db: Db,
  id: number,
  outcome: Pick<PipelineRunRow, 'status' | 'finished_at' | 'summary' | 'error'>,
): Promise<void> {
  await db.updateTable('pipeline_runs').set(outcome).where('id', '=', id).execute();
}

/** The catalogue version and settings hash of the last successful run. */
export function selectLastSucceededPipelineRun(
  db: Db,
): Promise<Pick<PipelineRunRow, 'catalogue_version' | 'settings_hash'> | undefined> {
  return db
    .selectFrom('pipeline_runs')
    .select(['catalogue_version', 'settings_hash'])
    .where('status', '=', 'succeeded')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
