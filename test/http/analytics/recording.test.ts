import t from 'tap';
import { clockAt } from '../../support/clock.js';
import { createFeed, runFeeds } from '../../support/feeds.js';
import { productBody, startTestServer } from '../../support/server.js';

const GPT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CHATGPT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

t.test('requests to the discovery server and the feed export become interactions', async (t) => {
  const clock = clockAt('2026-11-25T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  for (const brand of ['Northwind', 'Lumen']) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ attributes: { brand } }),
    });
    t.equal(res.status, 201);
  }
  const feed = await createFeed(s, { name: 'All', format: 'json' });
  await runFeeds(s);
  const feeds = s.server.discovery.url;

  const served = [
    await fetch(`${feeds}/v1/feeds/northwind/products.json`, { headers: { 'user-agent': GPT } }),
    await fetch(`${feeds}/v1/brands/lumen`, {
      headers: {
        'user-agent': 'Mozilla/5.0 (compatible; shop-agent/1.0)',
        'signature-agent': '"https://agent.example"',
      },
    }),
    await fetch(`${feeds}/v1/nothing.json`, { headers: { 'user-agent': CHATGPT } }),
  ];
  for (const r of served) await r.text();
  t.same(
    served.map((r) => r.status),
    [200, 200, 404],
  );
  const exported = await fetch(`${s.url}/v1/feeds/${feed.id}/export`, {
    headers: { authorization: `Bearer ${s.keys.read_only}`, 'user-agent': CHATGPT },
  });
  t.equal(exported.status, 200);
  const exportBytes = Number(exported.headers.get('content-length'));
  t.ok(exportBytes > 0, 'a sized answer');
  await exported.arrayBuffer();

  const db = s.server.store.db;
  await s.server.discovery.flushRequests();
  // The export is recorded when its answer is closed; wait for that, then write the queue.
  const deadline = Date.now() + 60_000;
  for (;;) {
    await s.server.deps.accessLog!.flush();
    const n = await db
      .selectFrom('interactions')
      .where('source', '=', 'export')
      .selectAll()
      .execute();
    if (n.length > 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const rows = await db.selectFrom('interactions').selectAll().orderBy('id').execute();
  const bySource = (source: string) => rows.filter((r) => r.source === source);
  t.match(bySource('server'), [
    {
      path: '/v1/feeds/northwind/products.json',
      brand: 'northwind',
      status: 200,
      agent: 'GPTBot',
      kind: 'training',
    },
    { path: '/v1/brands/lumen', brand: 'lumen', status: 200, kind: 'agent' },
    {
      path: '/v1/nothing.json',
      brand: null,
      status: 404,
      agent: 'ChatGPT-User',
      kind: 'assistant',
    },
  ]);
  t.match(bySource('export'), [
    {
      path: `/v1/feeds/${feed.id}/export`,
      status: 200,
      agent: 'ChatGPT-User',
      kind: 'assistant',
      at: '2026-11-25T12:00:00.000Z',
    },
  ]);
  t.equal(bySource('export')[0]!.bytes, exportBytes, 'the bytes sent (gzip, as fetch asks for it)');

  const res = await s.request(
    'GET',
    '/v1/analytics/ai-interactions?start_date=2026-11-25&end_date=2026-11-25',
  );
  t.equal(res.body.total, 4, 'GPTBot, the signed agent, ChatGPT-User twice');
  t.same(res.body.breakdown.kinds, { assistant: 2, search: 0, training: 1, agent: 1 });
  const overview = await s.request(
    'GET',
    '/v1/analytics?start_date=2026-11-25&end_date=2026-11-25',
  );
  // northwind's feed and lumen's page were fetched: both products discovered.
  t.equal(overview.body.analytics.metrics.discovery_rate, 1);
});
