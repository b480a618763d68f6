import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Several processes on one store (issue 14): webhook deliveries carry a lease (who is
 * sending one, and until when), and the per-key burst, minute and month windows can live in
 * the store that every process shares.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_expires_at', 'text').execute();

  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('api_key_id', 'text', (c) => c.primaryKey())
    .addColumn('burst_start_ms', 'bigint', (c) => c.notNull())
    .addColumn('burst_count', 'integer', (c) => c.notNull())
    .addColumn('minute_start_ms', 'bigint', (c) => c.notNull())
    .addColumn('minute_count', 'integer', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('month_count', 'bigint', (c) => c.notNull())
    // Whether the last request was let through (and counted).
    .addColumn('last_allowed', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_limit_windows').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('lease_expires_at').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('lease_owner').execute();
}
