import { type Kysely, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('shop_domain', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    // AES-256-GCM ciphertext (domain/integrations/secret-box.ts); null when none are set.
    .addColumn('credentials', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('last_sync_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('product_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Which product each platform item became, and a fingerprint of what it was made from.
  await db.schema
    .createTable('integration_products')
    .addColumn('integration_id', 'text', (c) =>
      c.notNull().references('integrations.id').onDelete('cascade'),
    )
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('group_id', 'text')
    .addColumn('product_id', 'text', (c) => c.notNull())
    // Null once the item is gone from the platform (its product made inactive).
    .addColumn('fingerprint', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_products_pk', ['integration_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('integration_products_group')
    .on('integration_products')
    .columns(['integration_id', 'group_id'])
    .execute();
  await db.schema
    .createIndex('integration_products_product')
    .on('integration_products')
    .column('product_id')
    .execute();

  await db.schema
    .createTable('sync_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('integration_id', 'text', (c) =>
      c.notNull().references('integrations.id').onDelete('cascade'),
    )
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('fetched', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unchanged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    // Who runs it: a heartbeat that stops (or a pid gone from this host) means it died.
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('heartbeat_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sync_runs_history')
    .on('sync_runs')
    .columns(['integration_id', 'started_at'])
    .execute();
  // One running sync per integration, whichever process starts it (CLI or serve).
  await db.schema
    .createIndex('sync_runs_one_running')
    .on('sync_runs')
    .column('integration_id')
    .unique()
    .where(sql.ref('status'), '=', 'running')
    .execute();

  // Inbound platform webhooks already applied, by the platform's delivery id (replays).
  await db.schema
    .createTable('integration_webhook_receipts')
    .addColumn('integration_id', 'text', (c) =>
      c.notNull().references('integrations.id').onDelete('cascade'),
    )
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_webhook_receipts_pk', ['integration_id', 'webhook_id'])
    .execute();
  await db.schema
    .createIndex('integration_webhook_receipts_received_at')
    .on('integration_webhook_receipts')
    .column('received_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'integration_webhook_receipts',
    'sync_runs',
    'integration_products',
    'integrations',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
