import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * All-or-nothing syncs (issue 20): what a running sync has read is staged here, in batches,
 * and applied to the catalogue in one transaction at its end; a run that fails, is held or
 * whose process dies leaves only these rows, which the end of the run (or the recovery of
 * an interrupted one) deletes. `external_id` is an item the source still lists (so its
 * product is not made inactive); `payload` is the item to write (JSON), null when nothing
 * needs writing (an unchanged item, or a failed one whose product is kept).
 * Standard SQL, the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sync_staged_items')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('payload', 'text')
    .addPrimaryKeyConstraint('sync_staged_items_pk', ['run_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('sync_staged_items_external')
    .on('sync_staged_items')
    .columns(['run_id', 'external_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sync_staged_items').execute();
}
