import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

/**
 * A grouped channel feed (the acp profile, issue 22) reads its products in variant-group
 * order: by the group key (attributes.item_group_id, else the product's id), then id. Without
 * an index on that order every generation sorted the whole selection, rows and all (on
 * SQLite through temporary files): 60% of reading 100,000 products. This index gives the
 * rows in that order. The group key is the text of the feed query's expression
 * (DialectSql.jsonMember), as in products_discovery, so the two match.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const groupKey =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? sql.raw(`(attributes::jsonb ->> 'item_group_id')`)
      : sql.raw(`json_extract(attributes, '$.item_group_id')`);
  await sql`create index products_group_order on products (status, coalesce(${groupKey}, id), id)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists products_group_order`.execute(db);
}
