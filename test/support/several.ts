/**
 * Several `serve` processes on one store (issue 14): the environment they share, and the
 * store opened from the test for checks. On SQLite they share the file in DATA_DIR; with
 * AGENTSHELF_TEST_STORE=postgres, one fresh PostgreSQL database.
 */
import path from 'node:path';
import type { Test } from 'tap';
import { foldCounterDeltas, productCountsByStatus } from '../../src/db/queries/products.js';
import { openStoreAt, type Db, type Store, type StoreLocation } from '../../src/db/store.js';
import { runCli, startServe, type ServeProcess } from './cli.js';
import { waitUntil } from './receiver.js';
import { testStoreEnv } from './store.js';
import { ownTestDir } from './testdir.js';

export interface SharedStore {
  dir: string;
  /** What every process of the test gets: DATA_DIR, PUBLIC_DIR, DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  location: StoreLocation;
  /** An admin key made with `keys create` before any serve starts. */
  adminKey: string;
}

/** A fresh store for several processes, migrated, with an admin key. */
export async function sharedStore(
  t: Test,
  extra: Record<string, string> = {},
): Promise<SharedStore> {
  const dir = ownTestDir(t);
  const env: Record<string, string> = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    ...(await testStoreEnv(dir)),
    ...extra,
  };
  const location: StoreLocation = env.DATABASE_URL
    ? { dialect: 'postgres', url: env.DATABASE_URL }
    : { dialect: 'sqlite', file: path.join(dir, 'agentshelf.sqlite') };
  const made = runCli(['keys', 'create', '--level', 'admin', '--name', 'test admin'], env);
  if (made.status !== 0) throw new Error(`keys create failed: ${made.stderr}`);
  return { dir, env, location, adminKey: made.stdout.trim() };
}

/** Opens the shared store from the test; closed when the test ends. */
export function openShared(t: Test, shared: SharedStore): Store {
  const store = openStoreAt(shared.location);
  t.teardown(() => store.close());
  return store;
}

/** Starts a `serve` on the shared store; SIGKILLed when the test ends if still running. */
export async function serveShared(
  t: Test,
  shared: SharedStore,
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const served = await startServe({ ...shared.env, ...env });
  t.teardown(async () => {
    if (served.child.exitCode === null && served.child.signalCode === null) {
      served.child.kill('SIGKILL');
    }
    await served.exited;
  });
  return served;
}

/**
 * The catalogue's kept counters against a recount of the products, as the several-process
 * tests check them after their load: every status's count (its product_counts row plus the
 * writers' deltas), and the (category, status) counts that are not zero (category_counts plus
 * category_count_deltas); then again after a fold of the deltas into the base rows, which must
 * change nothing.
 */
export async function countersEqualRecount(t: Test, db: Db): Promise<void> {
  await keptEqualRecount(t, db, 'before a fold');
  // A serve may be folding at the same moment (its rows are skipped here, and still seen
  // until it commits): fold until no delta is left. Nothing writes any more, so it ends.
  await waitUntil('every product delta folded', async () => {
    await foldCounterDeltas(db);
    const left = await db
      .selectFrom('product_count_deltas')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(left.n) === 0;
  });
  await keptEqualRecount(t, db, 'after a fold');
}

async function keptEqualRecount(t: Test, db: Db, when: string): Promise<void> {
  const byStatus = await db
    .selectFrom('products')
    .select(({ fn }) => ['status', fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const counted = Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)]));
  for (const row of await productCountsByStatus(db)) {
    t.equal(row.count, counted[row.status] ?? 0, `product count ${row.status}, ${when}`);
  }
  const recount = await db
    .selectFrom('products')
    .where('category', 'is not', null)
    .select(({ fn }) => ['category', 'status', fn.countAll<number>().as('n')])
    .groupBy(['category', 'status'])
    .execute();
  const kept = await db
    .selectFrom(
      db
        .selectFrom('category_counts')
        .select(['category', 'status', 'count'])
        .unionAll(db.selectFrom('category_count_deltas').select(['category', 'status', 'count']))
        .as('c'),
    )
    .select(({ fn }) => ['category', 'status', fn.sum<number>('count').as('n')])
    .groupBy(['category', 'status'])
    .execute();
  const asKeys = (rows: { category: string | null; status: string; n: unknown }[]) =>
    rows
      .filter((r) => Number(r.n) !== 0)
      .map((r) => `${r.category}|${r.status}|${Number(r.n)}`)
      .sort();
  t.same(asKeys(kept), asKeys(recount), `category counts equal a recount, ${when}`);
}
