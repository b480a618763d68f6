import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Channels (issue 22, CONTRACT part 10): a feed gains the profile that shapes its records
 * (`agentshelf`, today's columns, for every feed that exists), an optional compression of
 * the file it publishes (`gzip`), and its channel settings (JSON: target_countries,
 * store_country, seller_name). Standard SQL, the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('feeds')
    .addColumn('profile', 'text', (c) => c.notNull().defaultTo('agentshelf'))
    .execute();
  await db.schema.alterTable('feeds').addColumn('compression', 'text').execute();
  await db.schema.alterTable('feeds').addColumn('settings', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('feeds').dropColumn('settings').execute();
  await db.schema.alterTable('feeds').dropColumn('compression').execute();
  await db.schema.alterTable('feeds').dropColumn('profile').execute();
}
