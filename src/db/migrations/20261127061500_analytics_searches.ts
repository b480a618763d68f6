import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations. Standard SQL, the same on PostgreSQL.

/**
 * What agents searched the UCP catalog for (issue 23), per day and query (lower-cased, spaces
 * collapsed): how many searches, and how many of them found nothing, so a merchant sees what
 * agents asked for and could not find (GET /v1/analytics/searches). A rollup like the other
 * analytics_daily_* tables: added to in the transaction that records the requests.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analytics_daily_searches')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('searches', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('no_results', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_daily_searches_pk', ['day', 'query'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('analytics_daily_searches').execute();
}
