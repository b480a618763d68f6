import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect. (The PostgreSQL branch came with PostgreSQL support;
// SQLite's statements are the ones this migration landed with.)

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Counts of products per (category, status), kept by triggers so that every write path (the
 * API, seeds, later integrations) keeps them right: a category-filtered list reads its total
 * and picks its query plan from them instead of counting hundreds of thousands of rows. The
 * category index gains status, created_at and id, so a category's page is sorted from the
 * index alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('category_counts')
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('category_counts_pk', ['category', 'status'])
    .execute();
  await sql`insert into category_counts (category, status, count)
    select category, status, count(*) from products where category is not null
    group by category, status`.execute(db);
  if (isPostgres(db)) await postgresTriggers(db);
  else await sqliteTriggers(db);

  await db.schema
    .createIndex('products_category_status_created')
    .on('products')
    .columns(['category', 'status', 'created_at', 'id'])
    .execute();
  await db.schema.dropIndex('products_category').execute();
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create trigger products_category_counts_insert after insert on products
    when new.category is not null
    begin
      insert into category_counts (category, status, count) values (new.category, new.status, 1)
        on conflict (category, status) do update set count = count + 1;
    end`.execute(db);
  await sql`create trigger products_category_counts_update after update of category, status on products
    when old.category is not new.category or old.status is not new.status
    begin
      update category_counts set count = count - 1
        where old.category is not null and category = old.category and status = old.status;
      insert into category_counts (category, status, count)
        select new.category, new.status, 1 where new.category is not null
        on conflict (category, status) do update set count = count + 1;
    end`.execute(db);
  await sql`create trigger products_category_counts_delete after delete on products
    when old.category is not null
    begin
      update category_counts set count = count - 1
        where category = old.category and status = old.status;
    end`.execute(db);
}

/** The same three triggers as PL/pgSQL: one function, row-level, after each change. */
async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create function products_category_counts() returns trigger language plpgsql as $$
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
  await sql`create trigger products_category_counts_insert after insert on products
    for each row when (new.category is not null)
    execute function products_category_counts()`.execute(db);
  await sql`create trigger products_category_counts_update after update of category, status on products
    for each row when (old.category is distinct from new.category or old.status is distinct from new.status)
    execute function products_category_counts()`.execute(db);
  await sql`create trigger products_category_counts_delete after delete on products
    for each row when (old.category is not null)
    execute function products_category_counts()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('products_category').on('products').column('category').execute();
  await db.schema.dropIndex('products_category_status_created').execute();
  for (const name of ['insert', 'update', 'delete']) {
    await sql`drop trigger ${sql.raw(`products_category_counts_${name}`)}${sql.raw(isPostgres(db) ? ' on products' : '')}`.execute(
      db,
    );
  }
  if (isPostgres(db)) await sql`drop function products_category_counts()`.execute(db);
  await db.schema.dropTable('category_counts').execute();
}
