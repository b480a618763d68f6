import t, { type Test } from 'tap';
import {
  insertDiscoveryBrands,
  recordBrandPublication,
} from '../../../src/db/queries/discovery.js';
import type { AccessRecord } from '../../../src/domain/analytics/access-record.js';
import { recordAccess } from '../../../src/domain/analytics/interactions.js';
import { clockAt } from '../../support/clock.js';
import { productBody, startTestServer, type TestServer } from '../../support/server.js';

// A small fixed set whose every metric is computed by hand below. Today is 2026-11-25; the
// period asked for is 2026-11-20..2026-11-24 (5 days), its previous period 11-15..11-19.
const GPT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CHATGPT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const SEARCH =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot';
const CLAUDE =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

function access(
  at: string,
  userAgent: string,
  path: string,
  status: number,
  dedupeKey: string | null = null,
): AccessRecord {
  return {
    at: new Date(at),
    method: 'GET',
    path,
    status,
    bytes: 100,
    userAgent,
    dedupeKey,
    source: dedupeKey ? 'cloudflare' : 'server',
  };
}

async function fixture(t: Test): Promise<TestServer> {
  const clock = clockAt('2026-11-25T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const db = s.server.store.db;
  const products: [string, string | null, string][] = [
    ['p1', 'Acme', 'active'],
    ['p2', 'Acme', 'active'],
    ['p3', 'Zeta', 'active'], // never interacted with
    ['p4', null, 'active'], // the store's own brand
    ['p5', 'Zeta', 'inactive'],
  ];
  for (const [id, brand, status] of products) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id, status, attributes: brand ? { brand } : {} }),
    });
    t.equal(res.status, 201, `product ${id}`);
  }
  // What the last publication carried per brand (the pipeline writes these).
  await insertDiscoveryBrands(db, [
    { name: 'Acme', slug: 'acme', created_at: '2026-11-01T00:00:00.000Z' },
    { name: 'Zeta', slug: 'zeta', created_at: '2026-11-01T00:00:00.000Z' },
    { name: 'My Store', slug: 'my-store', created_at: '2026-11-01T00:00:00.000Z' },
  ]);
  for (const [name, count] of [
    ['Acme', 2],
    ['Zeta', 1],
    ['My Store', 1],
  ] as const) {
    await recordBrandPublication(db, name, {
      product_count: count,
      updated_at: null,
      build_key: null,
      published_at: null,
    });
  }
  const first = await recordAccess(db, [
    access('2026-11-19T10:00:00.000Z', GPT, '/v1/feeds/acme/products.json', 200), // previous period
    access('2026-11-20T10:00:00.000Z', GPT, '/v1/feeds/acme/products.json', 200),
    access('2026-11-20T11:00:00.000Z', CHATGPT, '/v1/brands/zeta', 404),
    access('2026-11-22T09:00:00.000Z', CHROME, '/v1/index.json', 200),
    access('2026-11-22T09:05:00.000Z', 'curl/8.4.0', '/v1/index.json', 200),
    access('2026-11-23T00:00:00.000Z', SEARCH, '/v1/index.json', 200),
    access('2026-11-24T23:59:59.999Z', CLAUDE, '/v1/feeds/zeta/products.ndjson', 404, 'ray-1'),
    access('2026-11-24T23:59:59.999Z', CLAUDE, '/v1/feeds/zeta/products.ndjson', 404, 'ray-1'),
    access('2026-11-25T01:00:00.000Z', GPT, '/v1/index.json', 200), // today, after the period
  ]);
  t.same(first, { stored: 8, duplicates: 1 }, 'the repeated CDN request is stored once');
  const events = await s.request('POST', '/v1/analytics/events', {
    body: {
      events: [
        {
          type: 'view',
          product_id: 'p4',
          occurred_at: '2026-11-21T10:00:00Z',
          agent: 'ChatGPT-User',
        },
        { type: 'click', product_id: 'p4', occurred_at: '2026-11-21T10:05:00Z' },
        {
          type: 'conversion',
          product_id: 'p4',
          occurred_at: '2026-11-21T10:10:00Z',
          amount: 19.99,
          currency: 'USD',
        },
        {
          type: 'conversion',
          product_id: 'p1',
          occurred_at: '2026-11-24T08:00:00Z',
          amount: '5.00',
          currency: 'USD',
        },
        {
          type: 'conversion',
          product_id: 'p1',
          occurred_at: '2026-11-24T09:00:00+01:00',
          amount: 10,
          currency: 'EUR',
        },
      ],
    },
  });
  t.same(events.body, { received: 5, stored: 5, duplicates: 0 });
  return s;
}

const PERIOD = 'start_date=2026-11-20&end_date=2026-11-24';

t.test('the overview, computed by hand', async (t) => {
  const s = await fixture(t);
  const res = await s.request('GET', `/v1/analytics?${PERIOD}`);
  t.equal(res.status, 200);
  t.same(res.body.analytics, {
    period: {
      start_date: '2026-11-20T00:00:00.000Z',
      end_date: '2026-11-24T23:59:59.999Z',
      days: 5,
    },
    currency: 'USD',
    metrics: {
      total_products: 4, // p5 is inactive
      // GPTBot, ChatGPT-User, OAI-SearchBot, ClaudeBot, the view and the click; not Chrome, not curl
      ai_interactions: 6,
      // acme's feed was fetched (2 products); zeta only answered 404; p4 is named by events
      discovery_rate: 0.75,
      conversion_rate: 0.5, // 3 conversions (any currency) / 6
      revenue: 24.99, // 19.99 + 5.00 USD; the EUR conversion apart
      revenue_by_currency: { EUR: 10, USD: 24.99 }, // each currency on its own
    },
    trends: {
      ai_interactions: { daily_average: 1.2, growth_rate: 5 }, // 6 / 5 days; (6 - 1) / 1
      // daily rates 0/2, 1/2, 0/0, 0/1, 2/1 -> (0 + .5 + 0 + 0 + 2) / 5; previous rate 0/1: nothing
      conversion_rate: { daily_average: 0.5, growth_rate: null },
    },
    other_currencies: [{ currency: 'EUR', conversions: 1, amount: 10 }],
  });
  const overview = await s.request('GET', `/v1/analytics/overview?${PERIOD}`);
  t.same(overview.body, res.body, '/overview is the same answer');
});

t.test('an empty previous period and a period without data', async (t) => {
  const s = await fixture(t);
  const before = await s.request('GET', '/v1/analytics?start_date=2026-11-15&end_date=2026-11-19');
  t.same(before.body.analytics.metrics, {
    total_products: 4,
    ai_interactions: 1,
    discovery_rate: 0.5, // acme's 2 of 4
    conversion_rate: 0,
    revenue: 0,
    revenue_by_currency: { USD: 0 },
  });
  t.same(before.body.analytics.trends, {
    ai_interactions: { daily_average: 0.2, growth_rate: null },
    conversion_rate: { daily_average: 0, growth_rate: null },
  });
  const empty = await s.request('GET', '/v1/analytics?start_date=2026-10-01&end_date=2026-10-10');
  t.same(empty.body.analytics.metrics, {
    total_products: 4,
    ai_interactions: 0,
    discovery_rate: 0,
    conversion_rate: 0,
    revenue: 0,
    revenue_by_currency: { USD: 0 },
  });
  t.same(empty.body.analytics.trends, {
    ai_interactions: { daily_average: 0, growth_rate: null },
    conversion_rate: { daily_average: 0, growth_rate: null },
  });
  t.same(empty.body.analytics.other_currencies, []);
});

t.test('the default period, metric, and bad dates', async (t) => {
  const s = await fixture(t);
  const res = await s.request('GET', '/v1/analytics');
  t.same(res.body.analytics.period, {
    start_date: '2026-10-27T00:00:00.000Z',
    end_date: '2026-11-25T23:59:59.999Z',
    days: 30,
  });
  t.equal(res.body.analytics.metrics.ai_interactions, 8, 'the last 30 days, today included');
  const one = await s.request('GET', `/v1/analytics?${PERIOD}&metric=revenue`);
  t.same(one.body.analytics.metrics, {
    revenue: 24.99,
    revenue_by_currency: { EUR: 10, USD: 24.99 },
  });
  t.same(one.body.analytics.trends, {});
  const rate = await s.request('GET', `/v1/analytics?${PERIOD}&metric=conversion_rate`);
  t.same(rate.body.analytics.metrics, { conversion_rate: 0.5 });
  t.same(Object.keys(rate.body.analytics.trends), ['conversion_rate']);
  const bad = await s.request('GET', '/v1/analytics?metric=bogus');
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'invalid_parameter');
  t.match(
    bad.body.error.message,
    /metric must be one of total_products, ai_interactions, discovery_rate, conversion_rate, revenue/,
  );
  const reversed = await s.request(
    'GET',
    '/v1/analytics?start_date=2026-11-20&end_date=2026-11-19',
  );
  t.equal(reversed.status, 400);
  t.match(reversed.body.error.message, /end_date must not be before start_date/);
  const notADate = await s.request('GET', '/v1/analytics/products?start_date=2026-02-30');
  t.equal(notADate.status, 400);
  t.match(notADate.body.error.message, /^start_date must be a date/);
  const dateTime = await s.request(
    'GET',
    '/v1/analytics?start_date=2026-11-20T23:30:00-01:00&end_date=2026-11-24T10:00:00Z',
  );
  t.equal(
    dateTime.body.analytics.period.start_date,
    '2026-11-21T00:00:00.000Z',
    'a date-time counts as its UTC day',
  );
});

t.test('per product: sorted, paginated, other currencies apart', async (t) => {
  const s = await fixture(t);
  const res = await s.request('GET', `/v1/analytics/products?${PERIOD}`);
  t.equal(res.status, 200);
  const p4 = {
    product_id: 'p4',
    name: 'Trail Shoe',
    interactions: { total: 2, assistant: 1, search: 0, training: 0, agent: 1 },
    views: 1,
    clicks: 1,
    conversions: 1,
    revenue: 19.99,
    other_currencies: [],
    revenue_by_currency: { USD: 19.99 },
  };
  const p1 = {
    product_id: 'p1',
    name: 'Trail Shoe',
    interactions: { total: 0, assistant: 0, search: 0, training: 0, agent: 0 },
    views: 0,
    clicks: 0,
    conversions: 2,
    revenue: 5,
    other_currencies: [{ currency: 'EUR', conversions: 1, amount: 10 }],
    revenue_by_currency: { EUR: 10, USD: 5 },
  };
  t.match(res.body.products, [{ product_id: 'p4' }, { product_id: 'p1' }]);
  t.same(res.body.products, [p4, p1]);
  t.same(res.body.pagination, { limit: 50, offset: 0, total: 2, has_more: false });
  const byConversions = await s.request('GET', `/v1/analytics/products?${PERIOD}&sort=conversions`);
  t.same(
    byConversions.body.products.map((p: { product_id: string }) => p.product_id),
    ['p1', 'p4'],
  );
  const page = await s.request(
    'GET',
    `/v1/analytics/products?${PERIOD}&sort=revenue&limit=1&offset=1`,
  );
  t.same(
    page.body.products.map((p: { product_id: string }) => p.product_id),
    ['p1'],
  );
  t.same(page.body.pagination, { limit: 1, offset: 1, total: 2, has_more: false });
  const badSort = await s.request('GET', `/v1/analytics/products?sort=name`);
  t.equal(badSort.status, 400);
  t.match(
    badSort.body.error.message,
    /sort must be one of interactions, views, clicks, conversions, revenue/,
  );
});

t.test(
  'AI interactions: a daily series and the breakdown by agent, operator and kind',
  async (t) => {
    const s = await fixture(t);
    const res = await s.request('GET', `/v1/analytics/ai-interactions?${PERIOD}`);
    t.equal(res.status, 200);
    t.equal(res.body.total, 6);
    const day = (
      date: string,
      kinds: Record<string, number>,
      bots = 0,
      humans = 0,
      conversions = 0,
      revenue = 0,
      other: unknown[] = [],
    ) => {
      const interactions = { assistant: 0, search: 0, training: 0, agent: 0, ...kinds };
      const total = Object.values(interactions).reduce((a, b) => a + b, 0);
      return {
        date,
        interactions: { total, ...interactions },
        bots,
        humans,
        conversions,
        revenue,
        other_currencies: other,
      };
    };
    t.same(res.body.series, [
      day('2026-11-20', { training: 1, assistant: 1 }),
      day('2026-11-21', { assistant: 1, agent: 1 }, 0, 0, 1, 19.99),
      day('2026-11-22', {}, 1, 1),
      day('2026-11-23', { search: 1 }),
      day('2026-11-24', { training: 1 }, 0, 0, 2, 5, [
        { currency: 'EUR', conversions: 1, amount: 10 },
      ]),
    ]);
    t.same(res.body.breakdown, {
      agents: [
        {
          agent: 'ChatGPT-User',
          operator: 'OpenAI',
          kind: 'assistant',
          interactions: 2,
          verified: 0,
        },
        { agent: null, operator: null, kind: 'agent', interactions: 1, verified: 0 },
        {
          agent: 'ClaudeBot',
          operator: 'Anthropic',
          kind: 'training',
          interactions: 1,
          verified: 0,
        },
        { agent: 'GPTBot', operator: 'OpenAI', kind: 'training', interactions: 1, verified: 0 },
        {
          agent: 'OAI-SearchBot',
          operator: 'OpenAI',
          kind: 'search',
          interactions: 1,
          verified: 0,
        },
      ],
      operators: [
        { operator: 'OpenAI', interactions: 4 },
        { operator: null, interactions: 1 },
        { operator: 'Anthropic', interactions: 1 },
      ],
      kinds: { assistant: 2, search: 1, training: 2, agent: 1 },
      other: { bots: 1, humans: 1 },
    });
  },
);

t.test('conversions: totals and a daily series with revenue', async (t) => {
  const s = await fixture(t);
  const res = await s.request('GET', `/v1/analytics/conversions?${PERIOD}`);
  t.equal(res.status, 200);
  t.same(res.body, {
    period: {
      start_date: '2026-11-20T00:00:00.000Z',
      end_date: '2026-11-24T23:59:59.999Z',
      days: 5,
    },
    currency: 'USD',
    conversions: 3,
    revenue: 24.99,
    conversion_rate: 0.5,
    other_currencies: [{ currency: 'EUR', conversions: 1, amount: 10 }],
    revenue_by_currency: { EUR: 10, USD: 24.99 },
    series: [
      { date: '2026-11-20', conversions: 0, revenue: 0, other_currencies: [] },
      { date: '2026-11-21', conversions: 1, revenue: 19.99, other_currencies: [] },
      { date: '2026-11-22', conversions: 0, revenue: 0, other_currencies: [] },
      { date: '2026-11-23', conversions: 0, revenue: 0, other_currencies: [] },
      {
        date: '2026-11-24',
        conversions: 2,
        revenue: 5,
        other_currencies: [{ currency: 'EUR', conversions: 1, amount: 10 }],
      },
    ],
  });
});

t.test('every analytics read is open to every key level; events need read_write', async (t) => {
  const s = await fixture(t);
  for (const path of [
    '/v1/analytics',
    '/v1/analytics/overview',
    '/v1/analytics/products',
    '/v1/analytics/ai-interactions',
    '/v1/analytics/conversions',
  ]) {
    for (const level of ['read_only', 'read_write', 'admin'] as const) {
      t.equal(
        (await s.request('GET', path, { key: s.keys[level] })).status,
        200,
        `${level} GET ${path}`,
      );
    }
    t.equal((await s.request('GET', path, { key: null })).status, 401);
  }
  const event = { type: 'view', product_id: 'p2' };
  t.equal(
    (await s.request('POST', '/v1/analytics/events', { key: s.keys.read_only, body: event }))
      .status,
    403,
  );
  t.equal(
    (await s.request('POST', '/v1/analytics/events', { key: s.keys.read_write, body: event }))
      .status,
    200,
  );
});
