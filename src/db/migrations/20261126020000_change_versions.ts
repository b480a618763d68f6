import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Numbers that change with every transaction that changes what they name, so an answer
 * computed from those tables can be kept until one changes (domain/analytics/answer-cache.ts),
 * whichever process wrote:
 * - `analytics_traffic`: bumped with the traffic rollups (analytics_daily_traffic, _agents,
 *   _brands: every request recorded) by analytics/interactions.ts;
 * - `analytics_products`: bumped with the product rollups (analytics_daily_products, _revenue:
 *   events, requests naming a product), so the product answers outlive request traffic;
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
      { name: 'analytics_traffic', version: 1 },
      { name: 'analytics_products', version: 1 },
      { name: 'discovery_brands', version: 1 },
    ] as never)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('change_versions').execute();
}
