import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Publications to object storage (issue 24, CONTRACT part 12): one row per upload of the
 * published tree to PUBLISH_TARGET (a pipeline run's, or `agentshelf publish`'s), with what
 * it did and, once the CDN purge is set, the purge's outcome: the URLs to purge are kept until
 * the purge succeeds, so a failed purge is retried by a later pass.
 * Standard SQL, the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('publications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('uploaded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('held', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('purge_status', 'text')
    .addColumn('purge_urls', 'text')
    .addColumn('purge_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('purge_next_at', 'text')
    .addColumn('purge_error', 'text')
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('publications_started')
    .on('publications')
    .columns(['started_at', 'id'])
    .execute();
  await db.schema
    .createIndex('publications_purge')
    .on('publications')
    .columns(['purge_status', 'purge_next_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('publications').execute();
}
