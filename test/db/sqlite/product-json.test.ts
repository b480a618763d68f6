import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { openStore } from '../../../src/db/store.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import {
  findProductById,
  findProductJsonById,
  findProductPageJson,
} from '../../../src/db/queries/products.js';
import { readStoredProduct } from '../../../src/domain/catalogue/product.js';
import { apiProductOf } from '../../../src/domain/products/present.js';
import { createProduct } from '../../../src/domain/products/products.js';
import { ProductCreate } from '../../../src/domain/products/schemas.js';
import { product, productBody } from '../../support/products.js';
import { testStoreConfig } from '../../support/store.js';

// The presenter owns the API's product JSON; the database writes it too, for speed
// (src/db/sqlite/product-json.ts, src/db/postgres/product-json.ts). For any product the API
// accepts, the two are the same bytes (on PostgreSQL with AGENTSHELF_TEST_STORE=postgres).

const presented = (row: Parameters<typeof readStoredProduct>[0]) =>
  JSON.stringify(apiProductOf(readStoredProduct(row)));

t.test('the JSON SQLite writes for a product is the presenter JSON, byte for byte', async (t) => {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  const db = store.db;
  const stamp = fc.date({
    min: new Date('2000-01-01T00:00:00.000Z'),
    max: new Date('2099-12-31T23:59:59.999Z'),
    noInvalidDate: true,
  });
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(product, stamp, async (p, now) => {
      // Parsed as the API parses a request: the generator stays within what the API accepts.
      const input = ProductCreate.parse(JSON.parse(JSON.stringify(productBody(p))));
      const { id } = await createProduct(db, input, { currency: 'USD' }, now);
      const row = await findProductById(db, id);
      if (!row) throw new Error(`${id} was not stored`);
      const fast = (await findProductJsonById(db, id))?.toString('utf8');
      if (fast !== presented(row)) {
        throw new Error(`${id}: SQLite wrote\n${fast}\nthe presenter\n${presented(row)}`);
      }
      runs++;
    }),
    { numRuns: 200 },
  );
  t.equal(runs, 200, 'every generated product was compared');

  // A page: the rows in creation order, each as the presenter writes it.
  const rows = await db
    .selectFrom('products')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(50)
    .offset(10)
    .execute();
  const page = await findProductPageJson(db, {}, { limit: 50, offset: 10 });
  t.equal(page.count, 50);
  t.equal(page.json, `[${rows.map(presented).join(',')}]`);
  const none = await findProductPageJson(db, { category: 'Nowhere' }, { limit: 5, offset: 0 });
  t.equal(none.json, '[]', 'no rows: an empty array');
});
