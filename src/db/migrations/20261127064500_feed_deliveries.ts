import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Channel deliveries (issue 22, CONTRACT part 10): a feed's `delivery` (JSON: where its file
 * goes, with `max_drop`; null is hosted, the export URL alone) and its `credentials`
 * (AES-256-GCM ciphertext, as integrations' are; null when none). One `feed_deliveries` row
 * per generation of a feed with a push delivery: what was sent (or skipped, or held), the
 * file it sent (`file`, a hard link kept until the row is finished), its attempts and what
 * the remote answered. Standard SQL, the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('feeds').addColumn('delivery', 'text').execute();
  await db.schema.alterTable('feeds').addColumn('credentials', 'text').execute();
  await db.schema
    .createTable('feed_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('feed_id', 'text', (c) => c.notNull().references('feeds.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('products', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('file', 'text')
    .addColumn('reason', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('error', 'text')
    .addColumn('remote', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('feed_deliveries_feed')
    .on('feed_deliveries')
    .columns(['feed_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('feed_deliveries_due')
    .on('feed_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('feed_deliveries').execute();
  await db.schema.alterTable('feeds').dropColumn('credentials').execute();
  await db.schema.alterTable('feeds').dropColumn('delivery').execute();
}
