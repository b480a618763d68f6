import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  // Requests counted against each key's monthly quota, per calendar month (UTC, `YYYY-MM`).
  // No foreign key: a batch of counts must never fail as a whole because of one row.
  await db.schema
    .createTable('api_key_usage')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('api_key_usage_pk', ['api_key_id', 'month'])
    .execute();

  // No foreign key to api_keys: the log must keep its rows whatever happens to the keys,
  // and the batched inserts should not pay a lookup per row.
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('client_ip', 'text')
    .execute();
  // One index, on time: rows arrive in time order, so it only ever grows at its end. An index
  // on the key would take inserts in the middle of the tree and doubled the cost of a row
  // (measured); a query by key walks the time index instead (since/until narrow it).
  await db.schema
    .createIndex('audit_log_created_at')
    .on('audit_log')
    .columns(['created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropTable('api_key_usage').execute();
}
