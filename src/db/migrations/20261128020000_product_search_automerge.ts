import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

/**
 * SQLite: the FTS5 index merges its segments 16 at a time (`automerge`; FTS5's default is 4),
 * so product writes cost less to keep it in step (issue 23: writes with the index at least
 * 0.85x the same writes without it). Each write transaction leaves a segment of its own (100
 * products for a sync batch), and FTS5 merges a level's segments into the next once
 * `automerge` of them are there: every posting is written again at each level, log4 of the
 * segments with 4, log16 with 16. Counted with callgrind (instructions inside sqlite3_step,
 * 20,000 products in transactions of 100 on a fresh store): the index cost 56,000
 * instructions a product over the same writes without it, of which a third the merges; with
 * 16 at a time, 42,000 (0.75x; automerge off, crisis merges alone at 16, the same). A search
 * reads more, smaller segments (up to 15 a level, not 3): at 20,000 products a selective match
 * 0.1 to 0.4-0.5 ms, a broad ranked one unchanged (15-17 ms). A setting of the table (kept in
 * its _config shadow table), not a change of its schema: nothing is rebuilt, and the segments
 * already there merge as the next writes come.
 *
 * PostgreSQL: nothing (its search index is GIN, 20261127092500).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`insert into product_search (product_search, rank) values ('automerge', 16)`.execute(db);
}

/** Back to FTS5's default. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`insert into product_search (product_search, rank) values ('automerge', 4)`.execute(db);
}
