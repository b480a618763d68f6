import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The full-text index of active products (title, description, brand, category) that the UCP
 * catalog search reads (issue 23). Kept in step with every product write inside the write's
 * own transaction, whoever writes (the API, a sync, a seed, `store copy`):
 *
 * - SQLite: an FTS5 table without content of its own (`content=''`, rows deletable by rowid),
 *   keyed by the product row's rowid, filled by triggers on products; only active products
 *   are in it. Porter stemming over unicode61, diacritics folded.
 * - PostgreSQL: a GIN index on the weighted `tsvector` expression (english configuration),
 *   partial on active products; PostgreSQL keeps an index in step by itself. The queries
 *   (db/postgres/product-search.ts) write the same expression, so the planner uses it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // A lookup names a variant group by its attributes.item_group_id, and a search result
  // gathers its group's variants: both find the group's rows from this index. The text of
  // the expression is DialectSql.jsonMember's, so the queries' expression matches it.
  const groupKey = isPostgres(db)
    ? sql.raw(`(attributes::jsonb ->> 'item_group_id')`)
    : sql.raw(`json_extract(attributes, '$.item_group_id')`);
  await sql`create index products_item_group on products (${groupKey})`.execute(db);
  if (isPostgres(db)) {
    await sql`create index products_search on products using gin ((
      setweight(to_tsvector('english'::regconfig, name), 'A') ||
      setweight(to_tsvector('english'::regconfig, coalesce(brand, '')), 'B') ||
      setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C') ||
      setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'D')
    )) where status = 'active'`.execute(db);
    return;
  }
  // Its columns are named apart from products' own, so a query joining the two names them
  // without qualifying.
  await sql`create virtual table product_search using fts5(
    name_text, description_text, brand_text, category_text,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`.execute(db);
  await sql`insert into product_search (rowid, name_text, description_text, brand_text, category_text)
    select rowid, name, coalesce(description, ''), coalesce(brand, ''), coalesce(category, '')
    from products where status = 'active'`.execute(db);
  await sql`create trigger product_search_insert after insert on products
    when new.status = 'active'
    begin
      insert into product_search (rowid, name_text, description_text, brand_text, category_text)
        values (new.rowid, new.name, coalesce(new.description, ''), coalesce(new.brand, ''),
          coalesce(new.category, ''));
    end`.execute(db);
  await sql`create trigger product_search_update after update of name, description, brand, category, status on products
    when (old.status = 'active' or new.status = 'active') and (old.status is not new.status
      or old.name is not new.name or old.description is not new.description
      or old.brand is not new.brand or old.category is not new.category)
    begin
      delete from product_search where rowid = old.rowid and old.status = 'active';
      insert into product_search (rowid, name_text, description_text, brand_text, category_text)
        select new.rowid, new.name, coalesce(new.description, ''), coalesce(new.brand, ''),
          coalesce(new.category, '')
        where new.status = 'active';
    end`.execute(db);
  await sql`create trigger product_search_delete after delete on products
    when old.status = 'active'
    begin
      delete from product_search where rowid = old.rowid;
    end`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index products_item_group`.execute(db);
  if (isPostgres(db)) {
    await sql`drop index products_search`.execute(db);
    return;
  }
  for (const name of ['insert', 'update', 'delete']) {
    await sql`drop trigger ${sql.raw(`product_search_${name}`)}`.execute(db);
  }
  await sql`drop table product_search`.execute(db);
}
