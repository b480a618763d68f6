/**
 * A product by id as the API's JSON (findProductJsonById): on PostgreSQL's pool the reads
 * asked for in one turn of the event loop go as one query, each caller given its own product
 * (or none); SQLite reads each in place. Both stores answer the same.
 */
import path from 'node:path';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import t, { type Test } from 'tap';
import { migrateToLatest } from '../../src/db/migrate.js';
import { findProductJsonById } from '../../src/db/queries/products.js';
import { openStore } from '../../src/db/store.js';
import { onPostgres, testStoreConfig } from '../support/store.js';

async function storeWithProducts(t: Test, n: number) {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  const stamp = '2026-11-28T00:00:00.000Z';
  await store.db
    .insertInto('products')
    .values(
      Array.from({ length: n }, (_, i) => ({
        id: `p${i}`,
        name: `Product "${i}"`,
        description: 'A <b>product</b> & more.',
        price_minor: 100 + i,
        currency: 'USD',
        status: 'active' as const,
        category: 'Home',
        images: '[]',
        attributes: '{}',
        brand: null,
        created_at: stamp,
        updated_at: stamp,
      })),
    )
    .execute();
  return store;
}

/** Counts the queries run through it. */
class Counting implements KyselyPlugin {
  queries = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.queries++;
    return Promise.resolve(args.result);
  }
}

t.test('reads asked for together: one query on PostgreSQL, the same answers', async (t) => {
  const store = await storeWithProducts(t, 12);
  const plugin = new Counting();
  const db = store.db.withPlugin(plugin);
  // Each product, one of them twice, and two that do not exist.
  const ids = [...Array.from({ length: 12 }, (_, i) => `p${i}`), 'p3', 'missing', 'p"1'];
  const answers = await Promise.all(ids.map((id) => findProductJsonById(db, id)));
  t.equal(plugin.queries, onPostgres() ? 1 : ids.length, 'queries run');
  t.same(
    answers.map((a) => (a ? (JSON.parse(a.toString()) as { id: string }).id : undefined)),
    [...Array.from({ length: 12 }, (_, i) => `p${i}`), 'p3', undefined, undefined],
    'each caller its own product, or none',
  );
  const one = JSON.parse(answers[5]!.toString()) as Record<string, unknown>;
  t.match(one, { name: 'Product "5"', price: 1.05, currency: 'USD' }, 'the whole product');
  // Asked one at a time, each its own query, the same bytes.
  for (const [i, id] of ids.entries()) {
    const alone = await findProductJsonById(store.db, id);
    t.same(alone?.toString(), answers[i]?.toString(), `${id} alone`);
  }
  // In a transaction, read in place (its own connection).
  await store.db.transaction().execute(async (trx) => {
    t.ok(await findProductJsonById(trx, 'p1'));
  });
});

t.test('a failing batch fails each of its callers, and the next batch reads', async (t) => {
  const store = await storeWithProducts(t, 3);
  await store.db.schema.alterTable('products').renameTo('products_away').execute();
  const failed = await Promise.allSettled(
    ['p0', 'p1', 'p0'].map((id) => findProductJsonById(store.db, id)),
  );
  t.same(
    failed.map((f) => f.status),
    ['rejected', 'rejected', 'rejected'],
  );
  await store.db.schema.alterTable('products_away').renameTo('products').execute();
  t.ok(await findProductJsonById(store.db, 'p2'), 'read again once the table is back');
});
