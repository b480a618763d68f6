import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { openStore } from '../../src/db/store.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import {
  createFeed,
  feedPath,
  listRuns,
  runFeeds,
  temporaries,
  waitFor,
} from '../support/feeds.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const NEVER = '0 0 1 1 *'; // once a year: the schedule stays out of the way

function runs(s: TestServer) {
  return listRuns(s.server.store.db);
}

/** Waits until `n` runs have ended (a feed turns active before its run has ended). */
async function waitForRuns(s: TestServer, n: number, ms = 60_000) {
  return waitFor(
    async () => {
      const list = await runs(s);
      return list.filter((r) => r.status !== 'running').length >= n && list;
    },
    ms,
    `${n} finished runs`,
  );
}

async function feedStatus(s: TestServer, id: string): Promise<string> {
  return (await s.request('GET', `/v1/feeds/${id}`)).body.status;
}

t.test('a change after a quiet spell runs at once; a burst after it is gathered', async (t) => {
  // A minute's delay: a run that comes within the wait below did not wait for it.
  const s = await startTestServer(
    t,
    { FEEDS_CRON: NEVER, FEEDS_DEBOUNCE_MS: '60000' },
    { pipeline: true },
  );
  await waitForRuns(s, 1);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  const list = await waitForRuns(s, 2);
  t.equal(list.at(-1)!.trigger, 'products changed', 'the first change ran without the delay');

  // The next changes come within the delay: gathered, not run at once.
  await s.request('PUT', '/v1/products/A', { body: { name: 'Renamed' } });
  await s.request('PUT', '/v1/products/A', { body: { name: 'Renamed again' } });
  t.equal((await runs(s)).length, 2, 'changes within the delay wait for it');
});

t.test(
  'after a quiet spell, the first change of a burst runs at once, the rest once after it',
  async (t) => {
    const s = await startTestServer(
      t,
      // Ten seconds: five requests fit in it even on a busy machine (two cores, five test
      // files at once), which the check below makes sure of.
      { FEEDS_CRON: NEVER, FEEDS_DEBOUNCE_MS: '10000' },
      { pipeline: true },
    );
    await waitForRuns(s, 1);
    // The product after the quiet start runs at once; the feed, within the delay, waits for it.
    await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
    const feed = await createFeed(s, { name: 'F', format: 'json' });
    const settled = await waitFor(
      async () => {
        const list = await runs(s);
        return list.some((r) => r.trigger === 'feeds changed' && r.status !== 'running') && list;
      },
      60_000,
      'the run the feed asked for',
    );
    t.equal(await feedStatus(s, feed.id), 'active');
    const before = settled.length;

    // Past the delay: the first change of the burst runs at once, the other four are gathered
    // into one run after it (whichever of the two runs reads them).
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      await s.request('PUT', '/v1/products/A', { body: { name: `Name ${i}` } });
    }
    t.ok(Date.now() - started < 10_000, 'the burst fits in the delay');
    const after = await waitForRuns(s, before + 2);
    t.same(
      after.slice(before).map((r) => r.trigger),
      ['products changed', 'products changed'],
      `five changes, two runs: ${JSON.stringify(after)}`,
    );
    t.match(fs.readFileSync(feedPath(s, feed.id, 'json'), 'utf8'), '"title":"Name 4"');
  },
);

t.test(
  'serve runs the pipeline at start when the output is stale, not when it is current',
  async (t) => {
    const dir = t.testdir({});
    const env = { FEEDS_CRON: NEVER, FEEDS_DEBOUNCE_MS: '60000' };
    const first = await startTestServer(t, env, { dir });
    await first.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
    const feed = await createFeed(first, { name: 'F', format: 'csv' });
    await first.server.close();

    const second = await startTestServer(t, env, { dir, pipeline: true });
    await waitForRuns(second, 1);
    t.equal(await feedStatus(second, feed.id), 'active');
    t.same(
      (await runs(second)).map((r) => [r.trigger, r.status]),
      [['start', 'succeeded']],
    );
    await second.server.close();

    const third = await startTestServer(t, env, { dir, pipeline: true });
    await new Promise((r) => setTimeout(r, 700));
    t.equal((await runs(third)).length, 1, 'current output: no run at start');
    await third.server.close();

    const renamed = await startTestServer(
      t,
      { ...env, STORE_NAME: 'Renamed' },
      { dir, pipeline: true },
    );
    await waitForRuns(renamed, 2);
    t.match(fs.readFileSync(feedPath(renamed, feed.id, 'csv'), 'utf8'), /,Renamed,/);
    await renamed.server.close();

    fs.rmSync(feedPath(renamed, feed.id, 'csv'));
    const missing = await startTestServer(t, env, { dir, pipeline: true });
    await waitForRuns(missing, 3);
    t.ok(fs.existsSync(feedPath(missing, feed.id, 'csv')), 'a missing file makes the output stale');
  },
);

t.test('FEEDS_CRON runs the pipeline on its schedule', async (t) => {
  const s = await startTestServer(
    t,
    { FEEDS_CRON: '* * * * * *', FEEDS_DEBOUNCE_MS: '60000' },
    { pipeline: true },
  );
  await waitFor(
    async () => (await runs(s)).some((r) => r.trigger === 'cron' && r.status === 'succeeded'),
    10_000,
    'a cron run',
  );
  t.pass('a run started by the schedule');
});

t.test('a bad FEEDS_CRON is refused at start, naming the setting', async (t) => {
  await t.rejects(startTestServer(t, { FEEDS_CRON: 'every minute' }), {
    message: /^FEEDS_CRON: a cron expression/,
  });
});

t.test('shutdown aborts a run in progress: files stay whole, nothing is left behind', async (t) => {
  const s = await startTestServer(
    t,
    { FEEDS_CRON: NEVER, FEEDS_DEBOUNCE_MS: '0' },
    { pipeline: true },
  );
  await waitForRuns(s, 1);
  await seedSynthetic(s.server.store.db, { count: 20_000, brands: 5 });
  const feed = await createFeed(s, { name: 'F', format: 'xml' });
  await waitForRuns(s, 2, 120_000);
  t.equal(await feedStatus(s, feed.id), 'active');
  const file = feedPath(s, feed.id, 'xml');
  const published = fs.readFileSync(file);

  await sql`update products set price_minor = price_minor + 1`.execute(s.server.store.db);
  s.server.pipeline!.requestRun('test');
  const dir = path.dirname(file);
  await waitFor(() => temporaries(dir).length > 0, 120_000, 'a run writing');
  await s.server.close();
  s.server.pipeline!.requestRun('after close');

  t.same(temporaries(dir), [], 'the aborted run removed its temporary files');
  t.same(fs.readFileSync(file), published, 'the published file is the previous one, whole');
  const store = openStore(s.config);
  t.teardown(() => store.close());
  const list = await store.db.selectFrom('pipeline_runs').select(['trigger', 'status']).execute();
  t.same(list.at(-1), { trigger: 'test', status: 'aborted' });
  await new Promise((r) => setTimeout(r, 300));
  const later = await store.db.selectFrom('pipeline_runs').select('id').execute();
  t.equal(later.length, list.length, 'no run starts after shutdown');
  const lock = await store.db.selectFrom('pipeline_lock').selectAll().executeTakeFirstOrThrow();
  t.equal(lock.holder, null, 'the lock was released');
});

t.test("runFeeds over the same store waits for the server's run", async (t) => {
  // The scheduler and an in-process caller share the lock like two processes do.
  const s = await startTestServer(
    t,
    { FEEDS_CRON: NEVER, FEEDS_DEBOUNCE_MS: '0' },
    { pipeline: true },
  );
  await waitFor(async () => (await runs(s)).length === 1, 60_000, 'the run at start');
  const result = await runFeeds(s, { waitMs: 10_000 });
  t.equal((await runs(s))[0]!.status, 'succeeded', "the server's run had ended first");
  t.equal(result.status, 'succeeded');
});
