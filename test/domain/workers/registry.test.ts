import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { openStore, type Store } from '../../../src/db/store.js';
import { beatWorker } from '../../../src/db/queries/workers.js';
import { shareOf, WorkerRegistry } from '../../../src/domain/workers/registry.js';
import { clockAt, type TestClock } from '../../support/clock.js';
import { waitUntil } from '../../support/receiver.js';
import { testStoreConfig } from '../../support/store.js';

const logger = pino({ level: 'silent' });
const TTL_MS = 30_000;

async function migratedStore(t: Test): Promise<Store> {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'db.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  return store;
}

/** A clock the test moves: every registry of a test reads the same one. */
const clock = () => clockAt('2026-11-28T12:00:00.000Z');

/** Writes another worker's live row as its heartbeat would, then starts a registry beside it. */
async function besideRow(
  t: Test,
  store: Store,
  time: TestClock,
  other: string,
): Promise<WorkerRegistry> {
  const at = time.now();
  await beatWorker(
    store.db,
    other,
    at.toISOString(),
    new Date(at.getTime() + TTL_MS).toISOString(),
  );
  const registry = new WorkerRegistry({ db: store.db, logger, now: time.now, ttlMs: TTL_MS });
  await registry.start();
  t.teardown(() => registry.stop());
  return registry;
}

t.test(
  'shareOf deals the keys round the members: each key to one, shares equal within one',
  async (t) => {
    const members = ['w/1/a', 'w/2/b', 'w/3/c'];
    for (let n = 0; n <= 11; n++) {
      const keys = Array.from(
        { length: n },
        (_, i) => `wh_${String(i).padStart(2, '0')}`,
      ).reverse();
      const shares = members.map((m) => shareOf(keys, members, m));
      const all = shares.flatMap((s) => [...s]);
      t.same(all.sort(), [...keys].sort(), `${n} keys: every key in exactly one share`);
      const sizes = shares.map((s) => s.size);
      t.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${n} keys: shares ${sizes.join('/')}`);
    }
    t.same([...shareOf(['b', 'a'], ['x'], 'x')].sort(), ['a', 'b'], 'one member takes every key');
    t.same(
      [...shareOf(['b', 'a'], ['y', 'z'], 'x')].sort(),
      ['a', 'b'],
      'a member not in the list (not yet read) takes every key rather than none',
    );
  },
);

t.test(
  'registries on one store see each other, split the keys, and take over a stopped one',
  async (t) => {
    const store = await migratedStore(t);
    const time = clock();
    const make = () => new WorkerRegistry({ db: store.db, logger, now: time.now, ttlMs: TTL_MS });
    const a = make();
    await a.start();
    t.teardown(() => a.stop());
    t.same(a.live(), [a.id], 'alone: itself');
    const keys = ['wh_1', 'wh_2', 'wh_3', 'wh_4'];
    t.same([...a.share(keys)].sort(), keys, 'alone, it takes every key');

    const b = make();
    await b.start();
    t.teardown(() => b.stop());
    t.same(b.live(), [a.id, b.id].sort(), 'the second sees the first at its first heartbeat');
    // The first sees the second at its next heartbeat (every second at most).
    await waitUntil('the first to see the second', () => a.live().length === 2, 10_000);
    const shareA = a.share(keys);
    const shareB = b.share(keys);
    t.equal(shareA.size, 2);
    t.equal(shareB.size, 2);
    t.same([...shareA, ...shareB].sort(), keys, 'together they cover every key once');

    await b.stop();
    const rows = await store.db.selectFrom('workers').select('id').execute();
    t.same(
      rows.map((r) => r.id),
      [a.id],
      'a stopped worker removes its row',
    );
    await waitUntil('the first to see the second gone', () => a.live().length === 1, 10_000);
    t.same([...a.share(keys)].sort(), keys, 'the one left takes every key again');
  },
);

t.test('a worker that stops beating is dropped once its row expires', async (t) => {
  const store = await migratedStore(t);
  const time = clock();
  // Another host's worker: its pid tells nothing here, only its row's expiry does.
  const remote = 'another-host.example/4242/AbCdEfGhIj';
  const a = await besideRow(t, store, time, remote);
  t.same(a.live(), [remote, a.id].sort(), 'a live remote worker counts');
  t.equal(a.share(['k1', 'k2']).size, 1, 'and takes its share');
  time.advance((TTL_MS + 1) / 1000);
  await waitUntil('the remote worker dropped', () => a.live().length === 1, 10_000);
  t.same(a.live(), [a.id], 'expired: no longer counted');
  t.same([...a.share(['k1', 'k2'])].sort(), ['k1', 'k2']);
});

t.test(
  'a worker of this host whose process is gone is dropped at once, its row removed',
  async (t) => {
    const store = await migratedStore(t);
    const time = clock();
    // The pid of a process that has exited (and was reaped): gone on this host.
    const child = spawnSync(process.execPath, ['-e', '0']);
    const dead = `${os.hostname()}/${child.pid}/ZyXwVuTsRq`;
    const a = await besideRow(t, store, time, dead);
    t.same(a.live(), [a.id], 'not counted, though its row has not expired');
    const rows = await store.db.selectFrom('workers').select('id').execute();
    t.same(
      rows.map((r) => r.id),
      [a.id],
      'and its row is gone',
    );
  },
);
