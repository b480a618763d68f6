/**
 * The acp_feed_api delivery against a local ACP Feed API built from
 * vendor/acp/openapi.feed.yaml (test/support/acp-feed-server.ts), which validates every body
 * with ajv against vendor/acp/schema.feed.json: Products upserted by PATCH in batches within
 * the limits, the answers kept, a refused batch a failed delivery with the API's answer,
 * retried; the definition's rules (an acp JSON Lines feed, a token, the outbound guard).
 */
import t from 'tap';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { startAcpFeedServer } from '../support/acp-feed-server.js';
import { runFeeds, waitFor } from '../support/feeds.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ENV = { ALLOW_PRIVATE_TARGETS: 'true', FEED_DELIVERY_RETRY_SCHEDULE: '0.05,0.05' };
const TOKEN = 'acp_test_token';

interface Delivery {
  id: string;
  status: string;
  attempts: number;
  error: string | null;
  remote: Record<string, unknown> | null;
}

async function newest(s: TestServer, feedId: string, until: (d: Delivery) => boolean) {
  return waitFor(async () => {
    const res = await s.request('GET', `/v1/feeds/${feedId}/deliveries`);
    const [last] = res.body.deliveries as Delivery[];
    return last && until(last) ? last : undefined;
  });
}

t.test(
  'an acp feed upserted by PATCH in batches; a refused batch fails, then is retried',
  async (t) => {
    const api = await startAcpFeedServer(t, { token: TOKEN });
    const remoteFeed = api.createFeed('US');
    const s = await startTestServer(t, ENV);
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
    t.notMatch(created.text, TOKEN, 'the token is never returned');
    const id = created.body.id;
    await runFeeds(s);
    const delivered = await newest(s, id, (d) => d.status === 'delivered');
    const records = (await s.request('GET', `/v1/feeds/${id}`)).body.product_count as number;
    t.ok(api.products(remoteFeed).size > 0);
    t.equal(
      api.patches.reduce((n, p) => n + p.products, 0),
      api.products(remoteFeed).size,
      'every Product upserted once',
    );
    t.ok(
      api.patches.every((p) => p.products <= 100 && p.status === 200),
      'batches of 100 at most',
    );
    t.match(delivered.remote, {
      feed_id: remoteFeed,
      batches: api.patches.length,
      last_answer: { id: remoteFeed, accepted: true },
    });
    t.ok(records >= api.products(remoteFeed).size, 'variants grouped into Products');

    api.failNext(1, 400);
    const before = api.patches.length;
    await seedSynthetic(s.server.store.db, { count: 1, brands: 3 });
    await runFeeds(s);
    const retried = await newest(s, id, (d) => d.status === 'delivered');
    t.equal(retried.attempts, 2, 'delivered on the retry');
    t.ok(
      api.patches.slice(before).some((p) => p.status === 400),
      'the first attempt was refused',
    );
    const events = await s.server.store.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'feed.delivery_failed')
      .execute();
    t.equal(events.length, 1);
    t.match(JSON.parse(events[0]!.data).error, /400/);
  },
);

t.test('the definition: an acp JSON Lines feed, a token, a guarded URL', async (t) => {
  const api = await startAcpFeedServer(t);
  const s = await startTestServer(t, ENV);
  const post = (body: Record<string, unknown>) => s.request('POST', '/v1/feeds', { body });
  const delivery = { type: 'acp_feed_api', url: api.url, feed_id: api.createFeed() };
  const openai = await post({
    name: 'x',
    profile: 'openai',
    format: 'jsonl',
    delivery,
    credentials: { token: TOKEN },
  });
  t.equal(openai.status, 422);
  t.match(openai.text, /delivery\.type/);
  const noToken = await post({ name: 'x', profile: 'acp', format: 'jsonl', delivery });
  t.equal(noToken.status, 422);
  t.match(noToken.text, /credentials/);
  const guarded = await startTestServer(t);
  const refused = await guarded.request('POST', '/v1/feeds', {
    body: { name: 'x', profile: 'acp', format: 'jsonl', delivery, credentials: { token: TOKEN } },
  });
  t.equal(refused.status, 422);
  t.match(refused.text, /delivery\.url/);
});

t.test('a PUT that changes profile, format or delivery is checked as a create is', async (t) => {
  const api = await startAcpFeedServer(t);
  const s = await startTestServer(t, ENV);
  const delivery = { type: 'acp_feed_api', url: api.url, feed_id: api.createFeed() };
  const created = await s.request('POST', '/v1/feeds', {
    body: { name: 'x', profile: 'acp', format: 'jsonl', delivery, credentials: { token: TOKEN } },
  });
  t.equal(created.status, 201, created.text);
  const put = (body: Record<string, unknown>) =>
    s.request('PUT', `/v1/feeds/${created.body.id}`, { body });
  /** The field a 422 names (`details` is "field: reason"). */
  const field = (res: { body: { error: { details: string } } }) =>
    res.body.error.details.split(':')[0];

  const openai = await put({ profile: 'openai' });
  t.equal(openai.status, 422, 'openai takes jsonl, but not the acp_feed_api delivery');
  t.equal(field(openai), 'profile');
  t.match(openai.body.error.message, /acp_feed_api takes an acp feed in jsonl/);
  const json = await put({ format: 'json' });
  t.equal(json.status, 422, 'acp takes json, but the Feed API takes jsonl');
  t.equal(field(json), 'format');
  const google = await put({ profile: 'google' });
  t.equal(google.status, 422);
  t.equal(field(google), 'format', 'google does not take jsonl');
  const gzip = await put({ profile: 'stripe', format: 'csv', compression: 'gzip' });
  t.equal(gzip.status, 422);
  t.equal(field(gzip), 'compression');
  const both = await put({ profile: 'openai', delivery });
  t.equal(both.status, 422);
  t.equal(field(both), 'delivery.type');
  const sftp = await put({
    delivery: {
      type: 'sftp',
      host: '127.0.0.1',
      port: 22,
      username: 'u',
      path: '/f',
      host_key_sha256: `SHA256:${'A'.repeat(43)}`,
    },
  });
  t.equal(sftp.status, 422, 'the acp token is no sftp credential');
  t.equal(field(sftp), 'credentials');
  const unchanged = await s.request('GET', `/v1/feeds/${created.body.id}`);
  t.match(unchanged.body, {
    profile: 'acp',
    format: 'jsonl',
    updated_at: created.body.updated_at,
    delivery: { type: 'acp_feed_api', feed_id: delivery.feed_id },
    credentials_set: true,
  });

  const renamed = await put({ name: 'renamed' });
  t.equal(renamed.status, 200, 'a change that keeps the channel is taken');
  const hosted = await put({ profile: 'openai', delivery: null });
  t.equal(hosted.status, 200, hosted.text);
  t.match(hosted.body, { profile: 'openai', delivery: { type: 'hosted' }, credentials_set: false });
});
