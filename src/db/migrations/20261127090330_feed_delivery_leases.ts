import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * Leases on feed deliveries (issue 22): a delivery being sent is held by the runner that
 * claimed it (`claimed_by`, `host/pid/random`) until `claimed_until`, which that runner
 * renews while it sends. A runner whose process dies mid-send stops renewing; once the lease
 * has lapsed another runner retakes the delivery, and only the holder may record its end.
 * A row that was `delivering` before this migration has no lease: it is retaken at once.
 * Standard SQL (two nullable text columns), the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('feed_deliveries').addColumn('claimed_by', 'text').execute();
  await db.schema.alterTable('feed_deliveries').addColumn('claimed_until', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('feed_deliveries').dropColumn('claimed_until').execute();
  await db.schema.alterTable('feed_deliveries').dropColumn('claimed_by').execute();
}
