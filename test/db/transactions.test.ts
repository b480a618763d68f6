// stores: sqlite-only — SQLite's write lock: a second better-sqlite3 connection must find the store
//   locked by a transaction begun IMMEDIATE; PostgreSQL's row locks are tested in
//   test/db/transaction.test.ts and test/several/
import path from 'node:path';
import SQLite from 'better-sqlite3';
import t from 'tap';
import { openStore } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';

t.test(
  'a transaction that reads then writes is not broken by another process writing in between',
  async (t) => {
    const file = path.join(t.testdir({}), 'store.sqlite');
    const store = openStore({ DATABASE_FILE: file });
    t.teardown(() => store.close());
    await migrateToLatest(store.db);
    // Another process: its own connection, and no patience, so it cannot wait for us.
    const other = new SQLite(file);
    other.pragma('busy_timeout = 0');
    t.teardown(() => other.close());
    let otherWrote: boolean | undefined;
    await store.db.transaction().execute(async (trx) => {
      await trx.selectFrom('product_counts').selectAll().execute();
      try {
        other.prepare("update product_counts set count = count + 1 where status = 'draft'").run();
        otherWrote = true;
      } catch (err) {
        t.equal((err as { code?: string }).code, 'SQLITE_BUSY', 'the other writer has to wait');
        otherWrote = false;
      }
      // With a deferred BEGIN this write would fail with SQLITE_BUSY_SNAPSHOT.
      await trx
        .updateTable('product_counts')
        .set({ count: 5 })
        .where('status', '=', 'active')
        .execute();
    });
    t.equal(otherWrote, false, 'the transaction held the write lock from its start');
    const row = await store.db
      .selectFrom('product_counts')
      .select('count')
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    t.equal(row.count, 5, 'and committed');
  },
);
