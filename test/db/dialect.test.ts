import path from 'node:path';
import {
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  sql,
} from 'kysely';
import t, { type Test } from 'tap';
import { dialectOf } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openStore } from '../../src/db/store.js';
import { insertAuditEntries } from '../../src/domain/audit/log.js';
import { onPostgres, testStoreConfig } from '../support/store.js';

async function migratedStore(t: Test) {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  return store;
}

t.test(
  "dialectOf names the store's database, for the store and for a transaction on it",
  async (t) => {
    const store = await migratedStore(t);
    const [name, limit] = onPostgres() ? ['postgres', 65_535] : ['sqlite', 32_766];
    t.equal(dialectOf(store.db).name, name);
    t.equal(dialectOf(store.db).maxBindParameters, limit);
    await store.db.transaction().execute(async (trx) => {
      t.equal(dialectOf(trx).name, name);
    });
  },
);

t.test('dialectOf refuses a database it has no SQL for, naming the adapter', async (t) => {
  const mysql = new Kysely<object>({
    dialect: {
      createAdapter: () => new MysqlAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new MysqlIntrospector(db),
      createQueryCompiler: () => new MysqlQueryCompiler(),
    },
  });
  t.throws(() => dialectOf(mysql), /no DialectSql for the database behind adapter MysqlAdapter/);
});

t.test('dayOf groups stored timestamps by their UTC day', async (t) => {
  const store = await migratedStore(t);
  const entry = (created_at: string) => ({
    created_at,
    api_key_id: 'key_1',
    method: 'GET',
    path: '/v1/products',
    status: 200,
    request_id: 'r',
    client_ip: null,
  });
  await insertAuditEntries(store.db, [
    entry('2026-11-20T23:59:59.999Z'),
    entry('2026-11-21T00:00:00.000Z'),
    entry('2026-11-21T23:59:59.999Z'),
    entry('2026-11-22T00:00:00.000Z'),
  ]);
  const day = dialectOf(store.db).dayOf('created_at');
  const rows = await store.db
    .selectFrom('audit_log')
    .select((eb) => [day.as('day'), eb.fn.countAll<number>().as('n')])
    .groupBy(day)
    .orderBy(day)
    .execute();
  t.same(rows, [
    { day: '2026-11-20', n: 1 },
    { day: '2026-11-21', n: 2 },
    { day: '2026-11-22', n: 1 },
  ]);
});

t.test('jsonMember reads a member of a JSON column, null when absent', async (t) => {
  const store = await migratedStore(t);
  const member = dialectOf(store.db).jsonMember('attributes', 'item_group_id');
  const rows = await sql<{
    v: string | null;
  }>`select ${member} as v from (select '{"item_group_id":"g1"}' as attributes union all select '{}') as t`.execute(
    store.db,
  );
  t.same(
    rows.rows.map((r) => r.v),
    ['g1', null],
  );
});

t.test('column names and keys that are not plain identifiers are refused', async (t) => {
  const store = await migratedStore(t);
  const d = dialectOf(store.db);
  t.throws(() => d.dayOf('created_at); drop table x; --'), /dayOf: .* is not a plain/);
  t.throws(() => d.jsonMember('attributes', "a'b"), /jsonMember: .* is not a plain/);
});
