import path from 'node:path';
import type { Kysely } from 'kysely';
import t from 'tap';
import { migrateToLatest } from '../../src/db/migrate.js';
import { preparedBatchQuery } from '../../src/db/prepared.js';
import type { Database } from '../../src/db/schema.js';
import { openStore } from '../../src/db/store.js';
import { testStoreConfig } from '../support/store.js';

const insertBrands = preparedBatchQuery((db: Kysely<Database>, slot, count) =>
  db.insertInto('discovery_brands').values(
    Array.from({ length: count }, (_, r) => ({
      name: slot(2 * r),
      slug: slot(2 * r + 1),
      // Constants the builder binds: kept as compiled.
      build_key: 'k7',
      created_at: '2026-11-21T10:00:00.000Z',
    })),
  ),
);

const rekeyBrands = preparedBatchQuery((db: Kysely<Database>, slot, count) =>
  db
    .updateTable('discovery_brands')
    .set({ build_key: slot(0) })
    .where(
      'slug',
      'in',
      Array.from({ length: count }, (_, i) => slot(i + 1)),
    ),
);

t.test(
  'a batch query compiled for one count runs again with new values and other counts',
  async (t) => {
    const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
    t.teardown(() => store.close());
    await migrateToLatest(store.db);
    await insertBrands(store.db, 2, ['A', 'a', 'B', 'b']);
    await insertBrands(store.db, 2, ['C', 'c', 'D', 'd']);
    await insertBrands(store.db, 1, ['E', 'e']);
    const rekeyed = await store.db
      .transaction()
      .execute((trx) => rekeyBrands(trx, 3, ['k8', 'a', 'c', 'e']));
    t.equal(Number(rekeyed.numAffectedRows), 3);
    await rekeyBrands(store.db, 1, ['k9', 'b']);
    const rows = await store.db
      .selectFrom('discovery_brands')
      .select(['slug', 'name', 'build_key'])
      .orderBy('slug')
      .execute();
    t.same(
      rows.map((r) => [r.slug, r.name, r.build_key]),
      [
        ['a', 'A', 'k8'],
        ['b', 'B', 'k9'],
        ['c', 'C', 'k8'],
        ['d', 'D', 'k7'],
        ['e', 'E', 'k8'],
      ],
    );
  },
);
