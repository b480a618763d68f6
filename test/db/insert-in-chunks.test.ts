import path from 'node:path';
import type { KyselyPlugin } from 'kysely';
import t, { type Test } from 'tap';
import {
  insertInChunks,
  insertValuesInChunks,
  upsertValuesInChunks,
} from '../../src/db/insert-in-chunks.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { NewInteractionRow } from '../../src/db/schema.js';
import { openStore, type Db } from '../../src/db/store.js';
import { onPostgres, testStoreConfig } from '../support/store.js';

/** A migrated store on a real file, and the rows each statement it runs inserts. */
async function storeWithStatementLog(t: Test) {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  const inserted: number[] = [];
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async ({ result }) => {
      if (result.numAffectedRows !== undefined) inserted.push(Number(result.numAffectedRows));
      return result;
    },
  };
  const db = store.db.withPlugin(counter) as Db;
  return { db, inserted };
}

const brands = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    name: `brand ${from + i}`,
    slug: `brand-${from + i}`,
    created_at: '2026-11-21T10:00:00.000Z',
  }));

t.test('empty input runs no statement', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  t.equal(await insertInChunks(db, 'discovery_brands', []), 0);
  t.same(inserted, []);
});

t.test('rows split at the bound-parameter limit, one parameter a column a row', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  // 3 columns, 30 parameters: 10 rows a statement.
  for (const [n, expected] of [
    [9, [9]],
    [10, [10]],
    [11, [10, 1]],
    [30, [10, 10, 10]],
    [31, [10, 10, 10, 1]],
  ] as const) {
    inserted.length = 0;
    await db.deleteFrom('discovery_brands').execute();
    inserted.length = 0;
    t.equal(await insertInChunks(db, 'discovery_brands', brands(n), { maxBindParameters: 30 }), n);
    t.same(inserted, expected, `${n} rows`);
    const stored = await db.selectFrom('discovery_brands').select('slug').orderBy('slug').execute();
    t.same(
      stored.map((r) => r.slug),
      brands(n)
        .map((b) => b.slug)
        .sort(),
      `${n} rows stored, each once`,
    );
  }
});

t.test('maxRows caps a statement below the parameter limit', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  await insertInChunks(db, 'discovery_brands', brands(9), { maxRows: 4 });
  t.same(inserted, [4, 4, 1]);
});

t.test("the database's own limit holds: the widest statement it allows is accepted", async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  // 9 columns: SQLite floor(32,766 / 9) = 3,640 rows, 32,760 parameters in the first
  // statement; PostgreSQL floor(65,535 / 9) = 7,281 rows, 65,529 parameters.
  const first = onPostgres() ? 7281 : 3640;
  const total = first + 360;
  const rows: NewInteractionRow[] = Array.from({ length: total }, (_, i) => ({
    at: '2026-11-21T10:00:00.000Z',
    source: 'server',
    method: 'GET',
    path: `/v1/${i}.json`,
    brand: null,
    status: 200,
    bytes: i,
    user_agent: 'ua',
    kind: 'human',
  }));
  await insertInChunks(db, 'interactions', rows, { maxRows: 10_000 });
  t.same(inserted, [first, 360]);
  const sum = await db
    .selectFrom('interactions')
    .select((eb) => eb.fn.sum<number>('bytes').as('s'))
    .executeTakeFirstOrThrow();
  t.equal(Number(sum.s), ((total - 1) * total) / 2, 'every value in its row');
});

t.test('a row wider than one statement may carry is refused, naming the table', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  await t.rejects(
    insertInChunks(db, 'discovery_brands', brands(2), { maxBindParameters: 2 }),
    /insertInChunks\(discovery_brands\): a row has 3 columns, more than the 2 bound parameters/,
  );
  t.same(inserted, [], 'nothing was written');
});

t.test('a reused statement carries each call its own values', async (t) => {
  const { db } = await storeWithStatementLog(t);
  await insertInChunks(db, 'discovery_brands', brands(8), { maxRows: 4 });
  await insertInChunks(db, 'discovery_brands', brands(8, 100), { maxRows: 4 });
  const stored = await db.selectFrom('discovery_brands').select('name').execute();
  t.equal(stored.length, 16);
  t.ok(stored.some((r) => r.name === 'brand 107'));
});

t.test('rows that name different columns are inserted with their own values', async (t) => {
  const { db } = await storeWithStatementLog(t);
  await insertInChunks(
    db,
    'discovery_brands',
    [
      { name: 'a', slug: 'a', created_at: '2026-11-21T10:00:00.000Z' },
      { name: 'b', slug: 'b', created_at: '2026-11-21T10:00:00.000Z', build_key: 'k7' },
      { name: 'c', slug: 'c', created_at: '2026-11-21T10:00:00.000Z' },
      { name: 'd', slug: 'd', created_at: '2026-11-21T10:00:00.000Z', build_key: 'k2' },
    ],
    { maxRows: 2 },
  );
  const stored = await db
    .selectFrom('discovery_brands')
    .select(['name', 'build_key'])
    .orderBy('name')
    .execute();
  // A column a row leaves out is null in that row (Kysely's multi-row insert on SQLite).
  t.same(stored, [
    { name: 'a', build_key: null },
    { name: 'b', build_key: 'k7' },
    { name: 'c', build_key: null },
    { name: 'd', build_key: 'k2' },
  ]);
});

t.test('inside a transaction, a failing chunk leaves no row behind', async (t) => {
  const { db } = await storeWithStatementLog(t);
  const rows = brands(5);
  rows[4]!.slug = rows[0]!.slug; // the unique slug fails in the second statement
  await t.rejects(
    db
      .transaction()
      .execute((trx) => insertInChunks(trx, 'discovery_brands', rows, { maxRows: 3 })),
    /UNIQUE|unique constraint/,
  );
  const stored = await db.selectFrom('discovery_brands').select('name').execute();
  t.same(stored, []);
});

t.test('rows given as values split the same way and store the same rows', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  const columns = ['name', 'slug', 'created_at'] as const;
  for (const [n, expected] of [
    [10, [10]],
    [11, [10, 1]],
    [31, [10, 10, 10, 1]],
  ] as const) {
    await db.deleteFrom('discovery_brands').execute();
    inserted.length = 0;
    const rows = brands(n).map((b) => [b.name, b.slug, b.created_at]);
    t.equal(
      await insertValuesInChunks(db, 'discovery_brands', columns, rows, { maxBindParameters: 30 }),
      n,
    );
    t.same(inserted, expected, `${n} rows`);
    const stored = await db
      .selectFrom('discovery_brands')
      .select(['name', 'slug', 'created_at'])
      .orderBy('slug')
      .execute();
    t.same(
      stored,
      brands(n).sort((a, b) => (a.slug < b.slug ? -1 : 1)),
      `${n} rows stored with their values in their columns`,
    );
  }
});

t.test('upsertValuesInChunks adds counts to the row of the same key', async (t) => {
  const { db, inserted } = await storeWithStatementLog(t);
  const cols = ['day', 'brand', 'interactions', 'fetched'] as const;
  const add = { columns: ['day', 'brand'], add: ['interactions', 'fetched'] };
  const first = Array.from({ length: 7 }, (_, i) => ['2026-11-20', `b${i}`, 1, i]);
  const r1 = await upsertValuesInChunks(db, 'analytics_daily_brands', cols, first, add, {
    maxRows: 4,
  });
  t.same(r1, { returned: [], affected: 7 });
  t.same(inserted, [4, 2, 1], 'a full chunk, then the rest as powers of two');
  const again = [
    ['2026-11-20', 'b1', 10, 100],
    ['2026-11-20', 'b6', 10, 100],
    ['2026-11-21', 'b1', 5, 5],
  ];
  await upsertValuesInChunks(db, 'analytics_daily_brands', cols, again, add, { maxRows: 4 });
  const rows = await db
    .selectFrom('analytics_daily_brands')
    .selectAll()
    .orderBy(['day', 'brand'])
    .execute();
  t.same(
    rows.map((r) => [r.day, r.brand, Number(r.interactions), Number(r.fetched)]),
    [
      ['2026-11-20', 'b0', 1, 0],
      ['2026-11-20', 'b1', 11, 101],
      ['2026-11-20', 'b2', 1, 2],
      ['2026-11-20', 'b3', 1, 3],
      ['2026-11-20', 'b4', 1, 4],
      ['2026-11-20', 'b5', 1, 5],
      ['2026-11-20', 'b6', 11, 106],
      ['2026-11-21', 'b1', 5, 5],
    ],
  );
});

t.test(
  'upsertValuesInChunks skips rows a partial unique index holds, and says which went in',
  async (t) => {
    const { db } = await storeWithStatementLog(t);
    const cols = ['at', 'source', 'kind', 'dedupe_key'] as const;
    const row = (key: string | null) => ['2026-11-20T10:00:00.000Z', 'cloudflare', 'human', key];
    const skip = {
      columns: ['dedupe_key'],
      whereNotNull: 'dedupe_key',
      returning: 'dedupe_key',
    };
    await upsertValuesInChunks(db, 'interactions', cols, [row('a'), row('b')], skip);
    const result = await upsertValuesInChunks(
      db,
      'interactions',
      cols,
      [row('a'), row('c'), row(null), row('c'), row(null), row('d')],
      skip,
      { maxRows: 4 },
    );
    t.same(
      [...result.returned].sort(),
      ['c', 'd', null, null],
      'stored and repeated keys are skipped; rows without a key always go in',
    );
    t.equal(result.affected, 4);
    const plain = await upsertValuesInChunks(db, 'interactions', cols, [row('d'), row('e')], {
      columns: ['dedupe_key'],
      whereNotNull: 'dedupe_key',
    });
    t.same(plain, { returned: [], affected: 1 }, 'without RETURNING: how many went in');
    const keys = await db.selectFrom('interactions').select('dedupe_key').orderBy('id').execute();
    t.same(
      keys.map((k) => k.dedupe_key),
      ['a', 'b', 'c', null, null, 'd', 'e'],
    );
  },
);
