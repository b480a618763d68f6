import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * The live workers (issue 25: fair sharing of work between processes). Each `serve` process
 * keeps a row here while it runs: its token (`host/pid/random`, as its leases are named), when
 * it started, and until when it counts as alive (`expires_at`, moved on by a heartbeat). The
 * processes read the live rows to share webhook endpoints and scheduled syncs between them.
 * A process that stops deletes its row; one killed leaves it until it expires (or until a
 * process on the same host sees its pid gone). Standard SQL, the same on SQLite and
 * PostgreSQL; timestamps as text, as everywhere in this schema.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('beat_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workers').execute();
}
