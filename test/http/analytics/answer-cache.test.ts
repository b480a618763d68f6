import t from 'tap';
import {
  insertDiscoveryBrands,
  recordBrandPublication,
} from '../../../src/db/queries/discovery.js';
import { openStore } from '../../../src/db/store.js';
import { recordAccess } from '../../../src/domain/analytics/interactions.js';
import { dailySeries } from '../../../src/domain/analytics/metrics.js';
import { clockAt } from '../../support/clock.js';
import { productBody, startTestServer } from '../../support/server.js';

// Analytics answers are kept until what they read changes (answer-cache.ts): every change an
// answer depends on must show in the next answer, whoever made it.
const GPT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const PERIOD = 'start_date=2026-11-20&end_date=2026-11-24';

t.test('a kept answer never outlives a change it depends on', async (t) => {
  const s = await startTestServer(t, {}, { now: clockAt('2026-11-25T12:00:00.000Z').now });
  const db = s.server.store.db;
  for (const [id, brand] of [
    ['p1', 'Acme'],
    ['p2', 'Acme'],
    ['p3', null],
  ] as const) {
    const body = productBody({ id, attributes: brand ? { brand } : {} });
    t.equal((await s.request('POST', '/v1/products', { body })).status, 201);
  }
  await insertDiscoveryBrands(db, [
    { name: 'Acme', slug: 'acme', created_at: '2026-11-01T00:00:00.000Z' },
    { name: 'My Store', slug: 'my-store', created_at: '2026-11-01T00:00:00.000Z' },
  ]);
  const publish = (name: string, count: number) =>
    recordBrandPublication(db, name, {
      product_count: count,
      updated_at: null,
      build_key: null,
      published_at: null,
    });
  await publish('Acme', 2);
  await publish('My Store', 1);
  const overview = async () => {
    const res = await s.request('GET', `/v1/analytics?${PERIOD}`);
    t.equal(res.status, 200);
    return res.body.analytics.metrics as Record<string, number>;
  };
  const products = async () => {
    const res = await s.request('GET', `/v1/analytics/products?${PERIOD}`);
    t.equal(res.status, 200);
    return (res.body.products as { product_id: string; name: string; views: number }[]).map((p) => [
      p.product_id,
      p.name,
      p.views,
    ]);
  };

  t.match(await overview(), { total_products: 3, ai_interactions: 0, discovery_rate: 0 });
  t.match(await overview(), { total_products: 3, ai_interactions: 0, discovery_rate: 0 });

  // An event names p1 (Acme, not fetched yet): discovered through the product.
  const view = await s.request('POST', '/v1/analytics/events', {
    body: { type: 'click', product_id: 'p1', occurred_at: '2026-11-20T10:00:00Z' },
  });
  t.equal(view.status, 200);
  t.match(await overview(), { ai_interactions: 1, discovery_rate: 0.333333 });

  // The traffic changes (this process): an agent fetched Acme's feed; p1 now counts through
  // its brand, once.
  await recordAccess(db, [
    {
      at: new Date('2026-11-21T10:00:00.000Z'),
      method: 'GET',
      path: '/v1/feeds/acme/products.json',
      status: 200,
      bytes: 10,
      userAgent: GPT,
      dedupeKey: null,
      source: 'server',
    },
  ]);
  t.match(await overview(), { ai_interactions: 2, discovery_rate: 0.666667 });

  // An event names p3 (no fetched brand): discovered too.
  const event = await s.request('POST', '/v1/analytics/events', {
    body: { type: 'view', product_id: 'p3', occurred_at: '2026-11-22T10:00:00Z' },
  });
  t.equal(event.status, 200);
  t.match(await overview(), { ai_interactions: 3, discovery_rate: 1 });
  t.same(await products(), [
    ['p1', 'Trail Shoe', 0],
    ['p3', 'Trail Shoe', 1],
  ]);

  // The catalogue changes: p3 is renamed (names are read each time), then made inactive.
  const renamed = await s.request('PUT', '/v1/products/p3', { body: { name: 'Summit Boot' } });
  t.equal(renamed.status, 200);
  t.same(await products(), [
    ['p1', 'Trail Shoe', 0],
    ['p3', 'Summit Boot', 1],
  ]);
  const off = await s.request('PUT', '/v1/products/p3', { body: { status: 'inactive' } });
  t.equal(off.status, 200);
  t.match(await overview(), { total_products: 2, discovery_rate: 1 });

  // A publication changes what Acme carried.
  await publish('Acme', 1);
  t.match(await overview(), { total_products: 2, discovery_rate: 0.5 });

  // Another connection (another process: `analytics import`) adds interactions.
  const other = openStore(s.config);
  t.teardown(() => other.close());
  await recordAccess(other.db, [
    {
      at: new Date('2026-11-23T10:00:00.000Z'),
      method: 'GET',
      path: '/v1/index.json',
      status: 200,
      bytes: 10,
      userAgent: GPT,
      dedupeKey: 'ray-elsewhere',
      source: 'cloudflare',
    },
  ]);
  t.match(await overview(), { ai_interactions: 4 });
  const series = await s.request('GET', `/v1/analytics/ai-interactions?${PERIOD}`);
  t.equal(series.body.total, 4);
});

t.test('a kept answer is frozen: a caller cannot change what the next caller gets', async (t) => {
  const s = await startTestServer(t, {}, { now: clockAt('2026-11-25T12:00:00.000Z').now });
  const period = { start: '2026-11-20', end: '2026-11-24' };
  const first = await dailySeries(s.server.store.db, period);
  const again = await dailySeries(s.server.store.db, period);
  t.equal(again, first, 'the kept answer is given again');
  t.throws(() => {
    (first as { date: string }[]).push({ date: 'x' });
  }, TypeError);
  t.throws(() => {
    first[0]!.interactions.total = 99;
  }, TypeError);
  t.equal(again[0]!.interactions.total, 0);
});
