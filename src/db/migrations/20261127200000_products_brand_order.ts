import type { Kysely } from 'kysely';

// Frozen once landed: later changes go in new migrations.

/**
 * A brand's products in creation order (`GET /v1/products?brand=`, the dashboard's brand
 * filter, issue 27): an index on (brand, created_at, id) in place of the one on brand alone,
 * which it covers. A page of a brand then reads its rows in order from the index, where the
 * old index gave every product of the brand to sort (about 1,000 table lookups a page for one
 * brand of a million products). Standard SQL, the same on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('products_brand_created')
    .on('products')
    .columns(['brand', 'created_at', 'id'])
    .execute();
  await db.schema.dropIndex('products_brand').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('products_brand').on('products').column('brand').execute();
  await db.schema.dropIndex('products_brand_created').execute();
}
