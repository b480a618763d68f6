import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Counters without hot rows (issue 25). Every product write used to add to one of the three
 * `product_counts` rows and (by trigger) a `category_counts` row, so on PostgreSQL concurrent
 * writers took turns on them. Now a writer adds to rows of its own: `product_count_deltas` and
 * `category_count_deltas`, keyed by `writer` (PostgreSQL's backend pid: one transaction at a
 * time per backend, so no two transactions ever write the same delta row). A count is the base
 * row plus its deltas; a periodic fold moves deltas into the base. On SQLite (one writer) the
 * writes still go to the base rows and the triggers are unchanged; the delta tables stay empty
 * there unless a store copy brings some.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('product_count_deltas')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('writer', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('product_count_deltas_pk', ['status', 'writer'])
    .execute();
  await db.schema
    .createTable('category_count_deltas')
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('writer', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('category_count_deltas_pk', ['category', 'status', 'writer'])
    .execute();
  if (!isPostgres(db)) return;
  // The triggers of 20261121050000_category_counts call this function: its new body adds to
  // the backend's own delta rows.
  await sql`create or replace function products_category_counts() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.category is not null then
        insert into category_count_deltas (category, status, writer, count)
          values (old.category, old.status, pg_backend_pid(), -1)
          on conflict (category, status, writer)
          do update set count = category_count_deltas.count - 1;
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.category is not null then
        insert into category_count_deltas (category, status, writer, count)
          values (new.category, new.status, pg_backend_pid(), 1)
          on conflict (category, status, writer)
          do update set count = category_count_deltas.count + 1;
      end if;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`update product_counts p set count = p.count + d.n
      from (select status, sum(count) as n from product_count_deltas group by status) d
      where p.status = d.status`.execute(db);
    await sql`insert into category_counts (category, status, count)
      select category, status, sum(count) from category_count_deltas group by category, status
      on conflict (category, status) do update set count = category_counts.count + excluded.count`.execute(
      db,
    );
    await sql`create or replace function products_category_counts() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.category is not null then
        update category_counts set count = count - 1
          where category = old.category and status = old.status;
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.category is not null then
        insert into category_counts (category, status, count) values (new.category, new.status, 1)
          on conflict (category, status) do update set count = category_counts.count + 1;
      end if;
      return null;
    end $$`.execute(db);
  }
  await db.schema.dropTable('category_count_deltas').execute();
  await db.schema.dropTable('product_count_deltas').execute();
}
