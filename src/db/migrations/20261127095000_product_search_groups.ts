import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed: later changes go in new migrations. This file imports nothing of src/:
// it carries its own SQL per dialect.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const TOKENIZE = `tokenize = 'porter unicode61 remove_diacritics 2'`;

/** The variant-group key of a product row (`new.` or none): item_group_id, else the id. */
const groupKey = (row: string) =>
  `coalesce(json_extract(${row}attributes, '$.item_group_id'), ${row}id)`;

/**
 * SQLite: the full-text index also keeps each active product's variant group, its brand and
 * group key (issue 23), as UNINDEXED columns of the FTS5 table (`contentless_unindexed`), so
 * a search without filters groups its hits from the index alone. Before, every hit was looked
 * up in products and its attributes JSON parsed to find its group: two thirds of a broad
 * search's time at 20,000 products. The triggers now also follow a change of the group
 * (attributes.item_group_id) and of the id. The table is made again and filled from products.
 *
 * PostgreSQL: nothing (its search reads products.search_vector, 20261127092500).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  for (const name of ['insert', 'update', 'delete']) {
    await sql`drop trigger ${sql.raw(`product_search_${name}`)}`.execute(db);
  }
  await sql`drop table product_search`.execute(db);
  await sql`create virtual table product_search using fts5(
    name_text, description_text, brand_text, category_text,
    group_brand unindexed, group_key unindexed,
    content = '', contentless_delete = 1, contentless_unindexed = 1,
    ${sql.raw(TOKENIZE)}
  )`.execute(db);
  await sql`insert into product_search (rowid, name_text, description_text, brand_text,
      category_text, group_brand, group_key)
    select rowid, name, coalesce(description, ''), coalesce(brand, ''), coalesce(category, ''),
      brand, ${sql.raw(groupKey(''))}
    from products where status = 'active'`.execute(db);
  const values = sql.raw(`new.rowid, new.name, coalesce(new.description, ''),
      coalesce(new.brand, ''), coalesce(new.category, ''), new.brand, ${groupKey('new.')}`);
  await sql`create trigger product_search_insert after insert on products
    when new.status = 'active'
    begin
      insert into product_search (rowid, name_text, description_text, brand_text, category_text,
        group_brand, group_key)
        values (${values});
    end`.execute(db);
  await sql`create trigger product_search_update
    after update of id, name, description, brand, category, status, attributes on products
    when (old.status = 'active' or new.status = 'active') and (old.status is not new.status
      or old.id is not new.id or old.name is not new.name
      or old.description is not new.description or old.brand is not new.brand
      or old.category is not new.category
      or ${sql.raw(groupKey('old.'))} is not ${sql.raw(groupKey('new.'))})
    begin
      delete from product_search where rowid = old.rowid and old.status = 'active';
      insert into product_search (rowid, name_text, description_text, brand_text, category_text,
        group_brand, group_key)
        select ${values}
        where new.status = 'active';
    end`.execute(db);
  await sql`create trigger product_search_delete after delete on products
    when old.status = 'active'
    begin
      delete from product_search where rowid = old.rowid;
    end`.execute(db);
}

/** Back to 20261127060000's table and triggers. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  for (const name of ['insert', 'update', 'delete']) {
    await sql`drop trigger ${sql.raw(`product_search_${name}`)}`.execute(db);
  }
  await sql`drop table product_search`.execute(db);
  await sql`create virtual table product_search using fts5(
    name_text, description_text, brand_text, category_text,
    content = '', contentless_delete = 1,
    ${sql.raw(TOKENIZE)}
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
