/**
 * Leases on feed deliveries: a real `agentshelf feeds deliver` child is killed with SIGKILL
 * mid-send (the local ACP Feed API holds its first PATCH unanswered), leaving its delivery
 * `delivering` with a lease. While the lease holds, a second `feeds deliver` child and the
 * serve worker leave it alone and send nothing; once the serve worker's clock (a test clock)
 * passes the lease, the worker retakes the delivery and completes it, every Product once.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { startAcpFeedServer } from '../support/acp-feed-server.js';
import { clockAt } from '../support/clock.js';
import { CLI, cliEnv, runCli, runFeeds, waitFor } from '../support/feeds.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TOKEN = 'acp_lease_token';
/** Long enough that it holds for the whole test by the real clock the children use. */
const LEASE_MS = 60_000;
const ENV = {
  ALLOW_PRIVATE_TARGETS: 'true',
  FEED_DELIVERY_RETRY_SCHEDULE: '0.05,0.05',
  FEED_DELIVERY_LEASE_MS: String(LEASE_MS),
};

async function deliveryRow(s: TestServer, id: string) {
  return s.server.store.db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

t.test('a delivery whose process was killed mid-send is retaken after its lease', async (t) => {
  const api = await startAcpFeedServer(t, { token: TOKEN });
  const remoteFeed = api.createFeed('US');
  const clock = clockAt(new Date().toISOString());
  const s = await startTestServer(t, ENV, { now: clock.now });
  await seedSynthetic(s.server.store.db, { count: 250, brands: 3 });
  const created = await s.request('POST', '/v1/feeds', {
    body: {
      name: 'Agents',
      profile: 'acp',
      format: 'jsonl',
      delivery: { type: 'acp_feed_api', url: api.url, feed_id: remoteFeed },
      credentials: { token: TOKEN },
    },
  });
  t.equal(created.status, 201, created.text);
  const feedId = created.body.id as string;
  await runFeeds(s);
  await waitFor(async () => {
    const res = await s.request('GET', `/v1/feeds/${feedId}/deliveries`);
    return res.body.deliveries[0]?.status === 'delivered';
  });
  const products = api.products(remoteFeed).size;
  t.ok(products > 100, 'more than one batch');
  const before = api.patches.length;

  // The first child sends again (--force) and is killed while its first PATCH is unanswered.
  const arrived = api.holdNext();
  const child = spawn(process.execPath, [CLI, 'feeds', 'deliver', feedId, '--force', '--json'], {
    env: cliEnv(s, ENV),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  // A child that ends before its PATCH arrives fails the test with what it said.
  await Promise.race([
    arrived,
    exited.then(() => Promise.reject(new Error(`feeds deliver ended first: ${output}`))),
  ]);
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  const [left] = await s.server.store.db
    .selectFrom('feed_deliveries')
    .selectAll()
    .where('status', '=', 'delivering')
    .execute();
  t.ok(left, 'the killed delivery is left delivering');
  t.match(left!.claimed_by, new RegExp(`/${child.pid}/`), 'leased to the killed process');
  t.ok(left!.claimed_until! > clock.now().toISOString(), 'its lease holds');

  // While the lease holds: a second child refuses, and the serve worker leaves it.
  const second = await runCli(['feeds', 'deliver', feedId, '--json'], cliEnv(s, ENV));
  t.equal(second.code, 1, second.stdout);
  t.match(second.stderr, /being sent by another process/);
  await s.server.deliveries.runDue();
  t.match(await deliveryRow(s, left!.id), { status: 'delivering', claimed_by: left!.claimed_by });
  t.equal(api.patches.length, before, 'nothing sent while the lease holds');
  t.equal(api.held, 1);

  // Past the lease: the serve worker retakes it and completes it.
  const lapsed = await deliveryRow(s, left!.id);
  clock.set(new Date(Date.parse(lapsed.claimed_until!) + 1000).toISOString());
  s.server.deliveries.nudge();
  const done = await waitFor(async () => {
    const row = await deliveryRow(s, left!.id);
    return row.status === 'delivered' ? row : undefined;
  });
  t.match(done, { attempts: 1, claimed_by: null, claimed_until: null, error: null });
  const resent = api.patches.slice(before);
  t.ok(
    resent.every((p) => p.status === 200),
    'every batch accepted',
  );
  t.equal(
    resent.reduce((n, p) => n + p.products, 0),
    products,
    'the retaken delivery sent every Product once',
  );
  t.equal(api.products(remoteFeed).size, products);
  const events = await s.server.store.db
    .selectFrom('events')
    .select('type')
    .where('type', 'like', 'feed.deliver%')
    .execute();
  t.same(
    events.map((e) => e.type),
    ['feed.delivered', 'feed.delivered'],
    'one feed.delivered per delivery',
  );

  // The next run finds the content delivered: skipped, nothing sent.
  const third = await runCli(['feeds', 'deliver', feedId, '--json'], cliEnv(s, ENV));
  t.equal(third.code, 0, third.stderr);
  t.match(JSON.parse(third.stdout), { status: 'skipped' });
});
