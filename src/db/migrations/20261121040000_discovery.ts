import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect. (The PostgreSQL group key came with PostgreSQL support;
// SQLite's text is the one this migration landed with.)

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per brand the registry has ever published: its slug is decided once and kept
  // (stable URLs even when a colliding brand appears later), and the state of its last
  // publication tells the next run whether the brand changed.
  await db.schema
    .createTable('discovery_brands')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('product_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text')
    .addColumn('build_key', 'text')
    .addColumn('published_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // Serves both the per-brand stream (products of a brand in variant-group order, no sort)
  // and the change check (count and newest updated_at per brand, read from the index alone).
  // The group key is the text of the queries' expression (DialectSql.jsonMember when this
  // was written), so the queries' expression matches the index's.
  const groupKey =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? sql.raw(`(attributes::jsonb ->> 'item_group_id')`)
      : sql.raw(`json_extract(attributes, '$.item_group_id')`);
  await sql`create index products_discovery on products (status, brand, coalesce(${groupKey}, id), id, updated_at)`.execute(
    db,
  );

  // Every request the discovery server answered, written in batches, for analytics.
  await db.schema
    .createTable('discovery_requests')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('brand', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('agent', 'text')
    .addColumn('is_ai_agent', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('discovery_requests_at')
    .on('discovery_requests')
    .column('at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('discovery_requests').execute();
  await sql`drop index if exists products_discovery`.execute(db);
  await db.schema.dropTable('discovery_brands').execute();
}
