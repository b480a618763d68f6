import path from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { openStore, openStoreAt, storeLocation, type Store } from '../../src/db/store.js';
import { freshDatabaseUrl, onPostgres } from '../support/store.js';

/** A migrated store: a SQLite file, or (AGENTSHELF_TEST_STORE=postgres) a fresh database. */
async function migratedStore(t: Test) {
  const file = path.join(t.testdir({}), 'store.sqlite');
  const store = openStore({
    DATABASE_FILE: file,
    DATABASE_URL: onPostgres() ? await freshDatabaseUrl() : undefined,
  });
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  return { store, file };
}

/** Waits until externalChanges holds still (PostgreSQL: its LISTEN connection is up). */
async function settled(store: Store): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const a = store.externalChanges();
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (store.externalChanges() === a) return a;
    if (Date.now() > deadline) throw new Error('externalChanges never settled');
  }
}

const key = {
  id: 'key_1',
  level: 'admin' as const,
  environment: 'live',
  key_hash: 'hash',
  key_prefix: 'ak_live_',
  last4: 'abcd',
  plan: 'free',
  created_at: '2026-11-21T10:00:00.000Z',
};

const brand = (i: number) => ({
  name: `brand ${i}`,
  slug: `brand-${i}`,
  created_at: '2026-11-21T10:00:00.000Z',
});

t.test('the location names the dialect and the file, or the PostgreSQL URL', async (t) => {
  const { file } = await migratedStore(t);
  t.same(storeLocation({ DATABASE_FILE: file }), { dialect: 'sqlite', file });
  const url = 'postgres://u:secret@db.example.com:6543/shop?pool_size=3';
  t.same(storeLocation({ DATABASE_URL: url, DATABASE_FILE: file }), { dialect: 'postgres', url });
  t.throws(
    () => storeLocation({ DATABASE_URL: 'mysql://x/y', DATABASE_FILE: file }),
    /DATABASE_URL: the scheme must be postgres/,
  );
  t.throws(
    () => storeLocation({ DATABASE_URL: 'postgres://x', DATABASE_FILE: file }),
    /DATABASE_URL: the database name/,
  );
  t.throws(() => openStoreAt({ dialect: 'oracle' } as never), /dialect "oracle" is not supported/);
});

t.test('a reader sees what the main connection committed, and cannot write', async (t) => {
  const { store } = await migratedStore(t);
  const reader = store.openReader();
  t.teardown(() => reader.destroy());
  t.same(await reader.selectFrom('discovery_brands').selectAll().execute(), []);
  await store.db.insertInto('discovery_brands').values(brand(1)).execute();
  const seen = await reader.selectFrom('discovery_brands').select('name').execute();
  t.same(seen, [{ name: 'brand 1' }]);
  await t.rejects(
    reader.insertInto('discovery_brands').values(brand(2)).execute(),
    /readonly|read-only/,
  );
});

t.test('streaming on a reader while the main connection runs queries does not hang', async (t) => {
  const { store } = await migratedStore(t);
  await store.db
    .insertInto('discovery_brands')
    .values(Array.from({ length: 50 }, (_, i) => brand(i)))
    .execute();
  const reader = store.openReader();
  t.teardown(() => reader.destroy());
  let streamed = 0;
  for await (const row of reader.selectFrom('discovery_brands').selectAll().stream(10)) {
    // Each row awaits a read and a write on the main connection, as the pipeline does.
    const again = await store.db
      .selectFrom('discovery_brands')
      .select('slug')
      .where('name', '=', row.name)
      .executeTakeFirstOrThrow();
    t.equal(again.slug, row.slug);
    await store.db
      .updateTable('discovery_brands')
      .set({ product_count: 1 })
      .where('name', '=', row.name)
      .execute();
    streamed++;
  }
  t.equal(streamed, 50);
  const counted = await store.db
    .selectFrom('discovery_brands')
    .select((eb) => eb.fn.sum<number>('product_count').as('n'))
    .executeTakeFirstOrThrow();
  t.equal(Number(counted.n), 50);
});

t.test(
  'a read outside a transaction does not wait for one under way, and sees the last commit',
  async (t) => {
    const { store } = await migratedStore(t);
    const db = store.db;
    await db.insertInto('discovery_brands').values(brand(1)).execute();
    let opened!: () => void;
    const inside = new Promise<void>((resolve) => (opened = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writing = withTransaction(db, async (trx) => {
      await trx.insertInto('discovery_brands').values(brand(2)).execute();
      opened();
      await held;
    });
    await inside;
    // The transaction is open (and waits for the reads): built and raw reads are answered.
    const names = await db.selectFrom('discovery_brands').select('name').execute();
    t.same(names, [{ name: 'brand 1' }], 'the last commit, not the transaction under way');
    const raw = await sql<{ n: number }>`select count(*) as n from discovery_brands`.execute(db);
    t.equal(Number(raw.rows[0]!.n), 1);
    release();
    await writing;
    const after = await db.selectFrom('discovery_brands').select('name').orderBy('name').execute();
    t.same(after, [{ name: 'brand 1' }, { name: 'brand 2' }], 'its commit is seen at once');
  },
);

t.test('externalChanges moves when another connection revokes a key', async (t) => {
  const { store } = await migratedStore(t);
  const other = openStoreAt(store.location);
  t.teardown(() => other.close());
  await other.db.insertInto('api_keys').values(key).execute();
  const before = await settled(store);
  await other.db
    .updateTable('api_keys')
    .set({ revoked_at: '2026-11-21T11:00:00.000Z' })
    .where('id', '=', key.id)
    .execute();
  // data_version is read at most once a millisecond; a NOTIFY arrives in about as long.
  const deadline = Date.now() + 30_000;
  while (store.externalChanges() === before) {
    if (Date.now() > deadline) throw new Error('externalChanges did not move');
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.pass('seen');
});

t.test('a worker thread opens its own store from the location alone', async (t) => {
  const { store } = await migratedStore(t);
  const storeModule = new URL('../../src/db/store.js', import.meta.url).href;
  const code = `
    const { workerData, parentPort } = await import('node:worker_threads');
    const { openStoreAt } = await import(${JSON.stringify(storeModule)});
    const store = openStoreAt(workerData.location);
    await store.db.insertInto('discovery_brands')
      .values({ name: 'from the thread', slug: 'thread', created_at: '2026-11-21T10:00:00.000Z' })
      .execute();
    await store.close();
    parentPort.postMessage('written');
  `;
  // The location crosses as plain data (structured clone), as the audit writer's does.
  const worker = new Worker(code, { eval: true, workerData: { location: store.location } });
  const message = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  t.equal(message, 'written');
  await worker.terminate();
  const rows = await store.db.selectFrom('discovery_brands').select('name').execute();
  t.same(rows, [{ name: 'from the thread' }]);
});
