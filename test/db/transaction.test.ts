import path from 'node:path';
import t, { type Test } from 'tap';
import { openStore } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { afterCommit, withTransaction } from '../../src/db/transaction.js';
import { testStoreConfig } from '../support/store.js';

async function store(t: Test) {
  const opened = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => opened.close());
  await migrateToLatest(opened.db);
  return opened.db;
}

const countOf = async (db: Awaited<ReturnType<typeof store>>, status: string) =>
  (
    await db
      .selectFrom('product_counts')
      .select('count')
      .where('status', '=', status as 'active')
      .executeTakeFirstOrThrow()
  ).count;

t.test('a nested withTransaction joins the open one: both commit or neither', async (t) => {
  const db = await store(t);
  let inner: unknown;
  let outer: unknown;
  await t.rejects(
    withTransaction(db, async (trx) => {
      outer = trx;
      await trx
        .updateTable('product_counts')
        .set({ count: 7 })
        .where('status', '=', 'active')
        .execute();
      await withTransaction(trx, async (joined) => {
        inner = joined;
        await joined
          .updateTable('product_counts')
          .set({ count: 8 })
          .where('status', '=', 'draft')
          .execute();
      });
      throw new Error('the outer unit of work fails after the inner one returned');
    }),
    /outer unit of work fails/,
  );
  t.equal(inner, outer, 'the inner call ran on the outer transaction');
  t.equal(await countOf(db, 'active'), 0, 'the outer change rolled back');
  t.equal(await countOf(db, 'draft'), 0, 'and so did the inner one');

  await withTransaction(db, async (trx) => {
    await trx
      .updateTable('product_counts')
      .set({ count: 7 })
      .where('status', '=', 'active')
      .execute();
    await withTransaction(trx, (joined) =>
      joined
        .updateTable('product_counts')
        .set({ count: 8 })
        .where('status', '=', 'draft')
        .execute(),
    );
  });
  t.equal(await countOf(db, 'active'), 7);
  t.equal(await countOf(db, 'draft'), 8, 'both committed together');
});

t.test('afterCommit runs once, after the outermost commit', async (t) => {
  const db = await store(t);
  const seen: string[] = [];
  await withTransaction(db, async (trx) => {
    afterCommit(trx, () => seen.push('outer'));
    await withTransaction(trx, async (joined) => {
      afterCommit(joined, () => seen.push('inner'));
    });
    t.same(seen, [], 'nothing runs when the inner call returns');
    await trx
      .updateTable('product_counts')
      .set({ count: 1 })
      .where('status', '=', 'active')
      .execute();
    t.same(seen, [], 'nor before the commit');
  });
  t.same(seen, ['outer', 'inner'], 'each once, in the order registered');
  // The callbacks saw the committed state: another connection reads it.
  t.equal(await countOf(db, 'active'), 1);
});

t.test('a rollback drops the afterCommit callbacks', async (t) => {
  const db = await store(t);
  const seen: string[] = [];
  await t.rejects(
    withTransaction(db, async (trx) => {
      afterCommit(trx, () => seen.push('outer'));
      await withTransaction(trx, async (joined) => {
        afterCommit(joined, () => seen.push('inner'));
      });
      throw new Error('rolled back');
    }),
  );
  t.same(seen, [], 'nothing ran');
  await withTransaction(db, async () => {});
  t.same(seen, [], 'and nothing is left over for the next transaction');
});

t.test('outside a transaction afterCommit runs at once', async (t) => {
  const db = await store(t);
  let ran = 0;
  afterCommit(db, () => ran++);
  t.equal(ran, 1);
});

t.test('a transaction not opened by withTransaction is refused by afterCommit', async (t) => {
  const db = await store(t);
  await db.transaction().execute(async (trx) => {
    t.throws(() => afterCommit(trx, () => {}), /not opened by withTransaction/);
  });
});
