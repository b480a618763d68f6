import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

/** The channel db/postgres/changes.ts LISTENs on (its KEY_CHANGES_CHANNEL); frozen here. */
const KEY_CHANGES_CHANNEL = 'agentshelf_key_changes';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * PostgreSQL only (SQLite's data_version already tells a process of another's commits): a
 * change to what authenticates a key (revocation, level, plan, limits) or a key's deletion
 * NOTIFYs KEY_CHANGES_CHANNEL, which every process LISTENs on (db/postgres/changes.ts), so
 * each key cache forgets at once. last_used_at, written on every use, notifies nobody.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create function api_keys_notify_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(KEY_CHANGES_CHANNEL)}, '');
      return null;
    end $$`.execute(db);
  await sql`create trigger api_keys_changed after update on api_keys
    for each row when (
      old.revoked_at is distinct from new.revoked_at or old.level is distinct from new.level
      or old.environment is distinct from new.environment or old.key_hash is distinct from new.key_hash
      or old.plan is distinct from new.plan or old.rpm is distinct from new.rpm
      or old.burst is distinct from new.burst or old.monthly is distinct from new.monthly
      or old.name is distinct from new.name)
    execute function api_keys_notify_change()`.execute(db);
  await sql`create trigger api_keys_deleted after delete on api_keys
    for each statement execute function api_keys_notify_change()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger api_keys_deleted on api_keys`.execute(db);
  await sql`drop trigger api_keys_changed on api_keys`.execute(db);
  await sql`drop function api_keys_notify_change()`.execute(db);
}
