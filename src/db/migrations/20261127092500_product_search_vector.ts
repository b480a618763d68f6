import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The weighted document of a product (english configuration), as 20261127060000 wrote it. */
const DOCUMENT = `
      setweight(to_tsvector('english'::regconfig, name), 'A') ||
      setweight(to_tsvector('english'::regconfig, coalesce(brand, '')), 'B') ||
      setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C') ||
      setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'D')`;

/**
 * PostgreSQL: the product's search document stored, not rebuilt by each search (issue 23).
 * Until now the GIN index was on the `tsvector` expression: a match was found from the index,
 * but `ts_rank` built each match's vector again from its four columns to score it. Now
 * `search_vector` is a generated STORED column (PostgreSQL computes it in the write's own
 * statement, whoever writes), its GIN index partial on active products as before, and the
 * search ranks on the stored vector. The expression index goes. Adding the column rewrites
 * the products table once.
 *
 * SQLite: nothing; its FTS5 table already stores the index it ranks on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table products add column search_vector tsvector
    generated always as (${sql.raw(DOCUMENT)}) stored`.execute(db);
  await sql`create index products_search_vector on products using gin (search_vector)
    where status = 'active'`.execute(db);
  await sql`drop index products_search`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create index products_search on products using gin ((${sql.raw(DOCUMENT)}))
    where status = 'active'`.execute(db);
  await sql`drop index products_search_vector`.execute(db);
  await sql`alter table products drop column search_vector`.execute(db);
}
