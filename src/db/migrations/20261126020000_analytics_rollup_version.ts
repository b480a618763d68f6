import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * A number that changes with every transaction that adds to the analytics rollups
 * (domain/analytics/interactions.ts bumps it in the same transaction), so an answer computed
 * from the rollups can be kept until it changes (domain/analytics/answer-cache.ts), whichever
 * process wrote. One row; standard SQL, the same on PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analytics_rollup_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .insertInto('analytics_rollup_version' as never)
    .values({ id: 1, version: 1 } as never)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('analytics_rollup_version').execute();
}
