import { type Kysely, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('event_cursor', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('webhook_id', 'text', (c) =>
      c.notNull().references('webhooks.id').onDelete('cascade'),
    )
    .addColumn('event_seq', 'integer')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The log, newest first, per endpoint (and filtered by status).
  await db.schema
    .createIndex('webhook_deliveries_webhook_seq')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'seq'])
    .execute();
  // Each endpoint's queue: its pending deliveries in order. Partial, so it stays as small
  // as the backlog while the log grows.
  await db.schema
    .createIndex('webhook_deliveries_pending')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_created_at')
    .on('webhook_deliveries')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_seq', 'integer', (c) =>
      c.notNull().references('webhook_deliveries.seq').onDelete('cascade'),
    )
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_seq', 'attempt'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhooks']) {
    await db.schema.dropTable(table).execute();
  }
}
