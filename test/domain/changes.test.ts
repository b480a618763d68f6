import path from 'node:path';
import t, { type Test } from 'tap';
import { openStore } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { changesOf, type StoreChange } from '../../src/domain/changes.js';
import { createFeed } from '../../src/domain/feeds/feeds.js';
import { createProduct, deleteProduct, updateProduct } from '../../src/domain/products/products.js';
import { createWebhook } from '../../src/domain/webhooks/webhooks.js';
import { testStoreConfig } from '../support/store.js';

async function store(t: Test) {
  const opened = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => opened.close());
  await migrateToLatest(opened.db);
  return opened.db;
}

/** Records each announcement with the number of products committed when it was heard. */
function listen(db: Awaited<ReturnType<typeof store>>, kinds: StoreChange[]) {
  const heard: { change: StoreChange; committed: Promise<number> }[] = [];
  for (const change of kinds) {
    changesOf(db).subscribe(change, () => {
      // A read on the store's own connection: it runs after the transaction has let it go.
      const committed = db
        .selectFrom('products')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n));
      heard.push({ change, committed });
    });
  }
  return heard;
}

const defaults = { currency: 'USD' };

t.test('a domain write announces its change once, after the commit', async (t) => {
  const db = await store(t);
  const heard = listen(db, ['catalogueChanged', 'eventRecorded', 'feedsChanged']);
  await createProduct(db, { id: 'p1', name: 'Lamp', price: 10 }, defaults);
  t.same(
    heard.map((h) => h.change),
    ['eventRecorded', 'catalogueChanged'],
    'one of each kind the write made, none other',
  );
  t.same(await Promise.all(heard.map((h) => h.committed)), [1, 1], 'the product was committed');
  heard.length = 0;
  await updateProduct(db, 'p1', { name: 'Lamp' });
  t.same(heard, [], 'a write that changes nothing announces nothing');
  await updateProduct(db, 'p1', { name: 'Desk lamp' });
  await deleteProduct(db, 'p1');
  t.equal(heard.filter((h) => h.change === 'catalogueChanged').length, 2);
});

t.test('several writes in one transaction announce each kind once, at its commit', async (t) => {
  const db = await store(t);
  const heard = listen(db, ['catalogueChanged', 'feedsChanged']);
  await withTransaction(db, async (trx) => {
    await createProduct(trx, { id: 'a', name: 'A', price: 1 }, defaults);
    await createProduct(trx, { id: 'b', name: 'B', price: 2 }, defaults);
    await createFeed(trx, { name: 'F', format: 'json' }, { baseUrl: 'http://x', startDelayMs: 0 });
    t.same(heard, [], 'nothing is announced before the commit');
  });
  t.same(
    heard.map((h) => h.change),
    ['catalogueChanged', 'feedsChanged'],
  );
  t.same(await Promise.all(heard.map((h) => h.committed)), [2, 2]);
});

t.test('a rolled-back write announces nothing', async (t) => {
  const db = await store(t);
  const heard = listen(db, ['catalogueChanged', 'eventRecorded', 'webhooksChanged']);
  await t.rejects(
    withTransaction(db, async (trx) => {
      await createProduct(trx, { id: 'a', name: 'A', price: 1 }, defaults);
      await createWebhook(trx, { url: 'http://127.0.0.1:1/hook' }, { allowPrivate: true });
      throw new Error('the import failed half way');
    }),
  );
  t.same(heard, []);
  await t.rejects(
    createProduct(db, { id: 'dup', name: 'A', price: 1 }, defaults).then(() =>
      createProduct(db, { id: 'dup', name: 'A', price: 1 }, defaults),
    ),
    /already exists/,
  );
  t.equal(heard.filter((h) => h.change === 'catalogueChanged').length, 1, 'only the first create');
  // The listener's reads end before the store closes.
  await Promise.all(heard.map((h) => h.committed));
});

t.test('each store has its own notifier', async (t) => {
  const one = await store(t);
  const two = await store(t);
  const heard = listen(one, ['catalogueChanged']);
  await createProduct(two, { id: 'x', name: 'X', price: 1 }, defaults);
  t.same(heard, []);
  t.equal(changesOf(one), changesOf(one));
});
