import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Numbers that change with every transaction that changes what they name, so an answer
 * computed from those tables can be kept until one changes (domain/analytics/answer-cache.ts),
 * whichever process wrote:
 * - `analytics_rollups`: bumped with the analytics_daily_* rollups (analytics/interactions.ts);
 * - `discovery_brands`: bumped with the published brands (queries/discovery.ts).
 * Standard SQL, the same on PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .insertInto('change_versions' as never)
    .values([
      { name: 'analytics_rollups', version: 1 },
      { name: 'discovery_brands', version: 1 },
    ] as never)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('change_versions').execute();
}
