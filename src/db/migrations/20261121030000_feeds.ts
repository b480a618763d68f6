import { type Kysely, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('feeds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('filter_category', 'text')
    .addColumn('filter_status', 'text')
    .addColumn('has_product_list', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('estimated_completion', 'text')
    .addColumn('published_format', 'text')
    .addColumn('sha256', 'text')
    .addColumn('product_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_updated', 'text')
    .addColumn('generated_at', 'text')
    .addColumn('last_run_ms', 'integer')
    .addColumn('diagnostics', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('feeds_created_at_id')
    .on('feeds')
    .columns(['created_at', 'id'])
    .execute();

  await db.schema
    .createTable('feed_products')
    .addColumn('feed_id', 'text', (c) => c.notNull().references('feeds.id').onDelete('cascade'))
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('feed_products_pk', ['feed_id', 'product_id'])
    .execute();

  await db.schema
    .createTable('pipeline_runs')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('catalogue_version', 'text', (c) => c.notNull())
    .addColumn('settings_hash', 'text', (c) => c.notNull())
    .addColumn('summary', 'text')
    .addColumn('error', 'text')
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('pipeline_runs_status')
    .on('pipeline_runs')
    .columns(['status', 'id'])
    .execute();

  await db.schema
    .createTable('pipeline_lock')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('pid', 'integer')
    .addColumn('hostname', 'text')
    .addColumn('acquired_at', 'text')
    .addColumn('heartbeat_ms', 'integer')
    .execute();
  await sql`insert into pipeline_lock (name) values ('pipeline')`.execute(db);

  await db.schema
    .createTable('pipeline_lock_waiters')
    .addColumn('ticket', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('heartbeat_ms', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'pipeline_lock_waiters',
    'pipeline_lock',
    'pipeline_runs',
    'feed_products',
    'feeds',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
