import path from 'node:path';
import t, { type Test } from 'tap';
import { openStore } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import {
  afterCommit,
  isTransientConflict,
  retryOnConflict,
  withTransaction,
} from '../../src/db/transaction.js';
import { onPostgres, testStoreConfig } from '../support/store.js';

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

t.test('retryOnConflict runs a transaction again only for a transient conflict', async (t) => {
  const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
  let runs = 0;
  const retried: number[] = [];
  const result = await retryOnConflict(
    async () => {
      if (++runs < 3) throw deadlock;
      return 'done';
    },
    (err, attempt) => retried.push(attempt),
  );
  t.equal(result, 'done', 'the third run answers');
  t.same(retried, [1, 2], 'each conflict told before its run again');

  runs = 0;
  await t.rejects(
    retryOnConflict(
      async () => {
        runs++;
        throw deadlock;
      },
      () => {},
      2,
    ),
    /deadlock detected/,
    'the last conflict is thrown',
  );
  t.equal(runs, 2, 'after as many runs as allowed');

  runs = 0;
  const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
  await t.rejects(
    retryOnConflict(
      async () => {
        runs++;
        throw unique;
      },
      () => t.fail('no retry'),
    ),
    /duplicate key/,
  );
  t.equal(runs, 1, 'any other error is thrown at once');
  t.notOk(isTransientConflict(new Error('plain')), 'an error without a code is not one');
});

t.test(
  'a deadlock PostgreSQL breaks is reported as a transient conflict and run again',
  async (t) => {
    if (!onPostgres()) {
      t.pass('SQLite has one writer at a time: its transactions never deadlock');
      return;
    }
    const db = await store(t);
    // Two transactions take the same two rows in opposite orders, each its first row before
    // the other asks for it: PostgreSQL ends one of them (40P01), which is run again.
    const firstTaken: [() => void, () => void] = [() => {}, () => {}];
    const taken = [0, 1].map((i) => new Promise<void>((resolve) => (firstTaken[i] = resolve)));
    const conflicts: unknown[] = [];
    const bump = (i: number, order: ['active' | 'draft', 'active' | 'draft']) =>
      retryOnConflict(
        () =>
          db.transaction().execute(async (trx) => {
            for (const [k, status] of order.entries()) {
              await trx
                .updateTable('product_counts')
                .set((eb) => ({ count: eb('count', '+', 1) }))
                .where('status', '=', status)
                .execute();
              if (k === 0) {
                firstTaken[i]!();
                await taken[1 - i];
              }
            }
          }),
        (err) => conflicts.push(err),
      );
    await Promise.all([bump(0, ['active', 'draft']), bump(1, ['draft', 'active'])]);
    t.equal(conflicts.length, 1, 'one of the two was ended by the deadlock detector');
    t.ok(
      isTransientConflict(conflicts[0]),
      `seen as a transient conflict: ${String(conflicts[0])}`,
    );
    t.equal(await countOf(db, 'active'), 2, 'both transactions counted, once each');
    t.equal(await countOf(db, 'draft'), 2);
  },
);
