import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sharedStore, type SharedStore } from '../support/several.js';

const LOCK = fileURLToPath(new URL('../../pipeline/lock.js', import.meta.url));
const QUERIES = fileURLToPath(new URL('../../src/db/queries/pipeline-lock.js', import.meta.url));
const STORE = fileURLToPath(new URL('../../src/db/store.js', import.meta.url));

/** Runs `body` in a child process with `store` open on the shared store; its stdout. */
function child(shared: SharedStore, body: string): Promise<string> {
  const code = `
    const lock = await import(${JSON.stringify(LOCK)});
    const queries = await import(${JSON.stringify(QUERIES)});
    const { openStoreAt } = await import(${JSON.stringify(STORE)});
    const store = openStoreAt(${JSON.stringify(shared.location)});
    try { ${body} } finally { await store.close(); }`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) =>
    proc.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${err}`)),
    ),
  );
}

t.test(
  'of processes racing for the free pipeline lock at one instant, exactly one gets it',
  async (t) => {
    const shared = await sharedStore(t);
    for (let round = 0; round < 5; round++) {
      const at = Date.now() + 1_500;
      const outs = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          child(
            shared,
            `
          // Asleep until just before the instant, then spinning to it: four processes spinning
          // the whole wait took 20 s of CPU from the rest of the suite.
          await new Promise((r) => setTimeout(r, Math.max(0, ${at} - Date.now() - 50)));
          while (Date.now() < ${at}) await new Promise((r) => setImmediate(r));
          const won = await queries.claimLock(store.db, 'pipeline', null, {
            token: 'racer-${round}-${i}', pid: process.pid, hostname: 'test',
            acquired_at: new Date().toISOString(), heartbeat_ms: Date.now(),
          });
          console.log(won ? 'won' : 'lost');`,
          ),
        ),
      );
      t.equal(outs.filter((o) => o.trim() === 'won').length, 1, `round ${round}: one winner`);
      // Free the lock for the next round.
      await child(
        shared,
        `await store.db.updateTable('pipeline_lock').set({ holder: null }).execute();`,
      );
    }
  },
);

t.test('pipeline runs of three processes never overlap', async (t) => {
  const shared = await sharedStore(t);
  const outs = await Promise.all(
    Array.from({ length: 3 }, () =>
      child(
        shared,
        `
        for (let i = 0; i < 8; i++) {
          const held = await lock.acquirePipelineLock(store.db, { waitMs: 60000 });
          const start = Date.now();
          await new Promise((r) => setTimeout(r, 15));
          const end = Date.now();
          await held.release();
          console.log(JSON.stringify([start, end, held.lost]));
        }`,
      ),
    ),
  );
  const holds = outs
    .flatMap((o) => o.trim().split('\n'))
    .map((l) => JSON.parse(l) as [number, number, boolean])
    .sort((a, b) => a[0] - b[0]);
  t.equal(holds.length, 24, 'every process held the lock 8 times');
  t.ok(
    holds.every((h) => !h[2]),
    'no holder lost the lock',
  );
  for (let i = 1; i < holds.length; i++) {
    t.ok(holds[i - 1]![1] <= holds[i]![0], `hold ${i - 1} ended before hold ${i} began`);
  }
});
