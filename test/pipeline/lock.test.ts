import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { acquirePipelineLock, PipelineBusyError } from '../../pipeline/lock.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { cliEnv, createFeed, listRuns, runCli, runFeeds, waitFor } from '../support/feeds.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

function runs(s: TestServer) {
  return listRuns(s.server.store.db);
}

/** Fails the test when two recorded runs overlap in time. */
function assertNoOverlap(t: Test, list: Awaited<ReturnType<typeof runs>>) {
  for (let i = 1; i < list.length; i++) {
    const prev = list[i - 1]!;
    const next = list[i]!;
    t.ok(
      prev.finished_at !== null && prev.finished_at <= next.started_at,
      `run ${prev.id} (${prev.trigger}, pid ${prev.pid}) ended ${prev.finished_at} before run ${next.id} (${next.trigger}, pid ${next.pid}) started ${next.started_at}`,
    );
  }
}

t.test('two runs in one process never overlap: the second waits for the first', async (t) => {
  const s = await startTestServer(t);
  await seedSynthetic(s.server.store.db, { count: 5_000, brands: 5 });
  await createFeed(s, { name: 'A', format: 'xml' });
  const [a, b] = await Promise.all([
    runFeeds(s, { waitMs: 60_000 }),
    runFeeds(s, { waitMs: 60_000 }),
  ]);
  t.equal(a.status, 'succeeded');
  t.equal(b.status, 'succeeded');
  const list = await runs(s);
  t.equal(list.length, 2);
  assertNoOverlap(t, list);
});

t.test('a live holder makes build wait; with --wait 0 it fails naming the holder', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  await createFeed(s, { name: 'A', format: 'json' });
  const lock = await acquirePipelineLock(s.server.store.db);
  const refused = await runCli(['build', '--wait', '0'], cliEnv(s));
  t.equal(refused.code, 1);
  t.match(
    refused.stderr,
    new RegExp(`another pipeline run holds the lock \\(pid ${process.pid} on ${os.hostname()}`),
  );
  t.equal((await runs(s)).length, 0, 'nothing ran');

  const waiting = runCli(['build', '--wait', '60'], cliEnv(s));
  await new Promise((r) => setTimeout(r, 700));
  const releasedAt = new Date().toISOString();
  await lock.release();
  const done = await waiting;
  t.equal(done.code, 0, done.stderr);
  const list = await runs(s);
  t.equal(list.length, 1);
  t.ok(list[0]!.started_at >= releasedAt, 'the build started once the holder let go');
});

t.test('a lock left by a killed process is taken over at once', async (t) => {
  const s = await startTestServer(t);
  const lockModule = fileURLToPath(new URL('../../pipeline/lock.js', import.meta.url));
  const dbModule = fileURLToPath(new URL('../../src/db/store.js', import.meta.url));
  const code = `
    const { acquirePipelineLock } = await import(${JSON.stringify(lockModule)});
    const { openStore } = await import(${JSON.stringify(dbModule)});
    const store = openStore(${JSON.stringify({ DATABASE_FILE: s.config.DATABASE_FILE, DATABASE_URL: s.config.DATABASE_URL })});
    await acquirePipelineLock(store.db);
    console.log('held');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  await t.rejects(acquirePipelineLock(s.server.store.db), PipelineBusyError, 'held while alive');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  const lock = await acquirePipelineLock(s.server.store.db, { waitMs: 0 });
  t.pass('taken over without waiting');
  await lock.release();
});

t.test(
  'a silent holder is taken over after the stale time; a past incarnation at once',
  async (t) => {
    const s = await startTestServer(t);
    const db = s.server.store.db;
    const hold = (pid: number, heartbeat: number) =>
      db
        .updateTable('pipeline_lock')
        .set({
          holder: 'someone',
          pid,
          hostname: os.hostname(),
          acquired_at: new Date(heartbeat).toISOString(),
          heartbeat_ms: heartbeat,
        })
        .execute();
    // pid 1 is alive on every Linux host.
    await hold(1, Date.now());
    await t.rejects(acquirePipelineLock(db), PipelineBusyError, 'a live, beating holder blocks');
    await hold(1, Date.now() - 61_000);
    const taken = await acquirePipelineLock(db);
    t.pass('a holder silent for over a minute is taken over');
    await taken.release();
    await hold(process.pid, Date.now());
    const again = await acquirePipelineLock(db);
    t.pass('our own pid with a token we do not hold is a past incarnation');
    await again.release();
    const row = await db.selectFrom('pipeline_lock').selectAll().executeTakeFirstOrThrow();
    t.equal(row.holder, null, 'release frees the lock');
  },
);

t.test('concurrent build and serve runs do not overlap', async (t) => {
  const s = await startTestServer(
    t,
    { FEEDS_CRON: '* * * * * *', FEEDS_DEBOUNCE_MS: '50' },
    { pipeline: true },
  );
  await seedSynthetic(s.server.store.db, { count: 3_000, brands: 8 });
  for (const format of ['json', 'csv', 'xml']) await createFeed(s, { name: format, format });
  const builds = [
    runCli(['build', '--wait', '120'], cliEnv(s)),
    runCli(['build', '--wait', '120'], cliEnv(s)),
  ];
  for (let i = 0; i < 3; i++) {
    await s.request('PUT', '/v1/products/syn_00000001', { body: { name: `Changed ${i}` } });
    await new Promise((r) => setTimeout(r, 150));
  }
  for (const build of await Promise.all(builds)) t.equal(build.code, 0, build.stderr);
  await waitFor(
    async () =>
      (await runs(s)).filter((r) => r.pid === process.pid && r.status !== 'running').length >= 2,
    60_000,
    'two runs of the server',
  );
  await s.server.close();
  const store = (await import('../../src/db/store.js')).openStore(s.config);
  t.teardown(() => store.close());
  const list = await listRuns(store.db);
  const pids = new Set(list.map((r) => r.pid));
  t.ok(pids.size >= 3, `runs from the server and both builds: ${JSON.stringify(list)}`);
  t.ok(list.some((r) => r.trigger === 'build'));
  t.ok(list.some((r) => r.pid === process.pid));
  assertNoOverlap(t, list);
  for (const run of list.slice(0, -1)) {
    t.equal(run.status, 'succeeded', `run ${run.id} of ${JSON.stringify(list)}`);
  }
  t.ok(['succeeded', 'aborted'].includes(list.at(-1)!.status), 'the last may be cut by shutdown');
});
