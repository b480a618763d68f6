import t, { type Test } from 'tap';
import { clockAt } from '../../support/clock.js';
import { productBody, startTestServer, type TestServer } from '../../support/server.js';

async function server(t: Test): Promise<TestServer> {
  const s = await startTestServer(t, {}, { now: clockAt('2026-11-25T12:00:00.000Z').now });
  for (const id of ['sku-1', 'sku-2']) {
    t.equal((await s.request('POST', '/v1/products', { body: productBody({ id }) })).status, 201);
  }
  return s;
}

async function stored(s: TestServer) {
  const db = s.server.store.db;
  const rows = await db.selectFrom('interactions').selectAll().orderBy('id').execute();
  const products = await db.selectFrom('analytics_daily_products').selectAll().execute();
  return { rows, products };
}

const post = (s: TestServer, body: unknown) => s.request('POST', '/v1/analytics/events', { body });

t.test('a single event, stored with its day rollup; occurred_at defaults to now', async (t) => {
  const s = await server(t);
  const res = await post(s, { type: 'view', product_id: 'sku-1', agent: 'Claude-User' });
  t.equal(res.status, 200);
  t.same(res.body, { received: 1, stored: 1, duplicates: 0 });
  const { rows, products } = await stored(s);
  t.match(rows, [
    {
      at: '2026-11-25T12:00:00.000Z',
      source: 'event',
      event_type: 'view',
      product_id: 'sku-1',
      agent: 'Claude-User',
      operator: 'Anthropic',
      kind: 'assistant',
      amount_minor: null,
    },
  ]);
  t.match(products, [
    { day: '2026-11-25', product_id: 'sku-1', interactions: 1, views: 1, assistant: 1 },
  ]);
});

t.test('a batch; conversions in minor units, other currencies kept as sent', async (t) => {
  const s = await server(t);
  const res = await post(s, {
    events: [
      {
        type: 'click',
        product_id: 'sku-1',
        occurred_at: '2026-11-24T10:00:00Z',
        agent: 'my-agent',
      },
      {
        type: 'conversion',
        product_id: 'sku-1',
        occurred_at: '2026-11-24T10:01:00Z',
        amount: 19.99,
        currency: 'USD',
      },
      {
        type: 'conversion',
        product_id: 'sku-2',
        occurred_at: '2026-11-24T10:02:00Z',
        amount: '1500',
        currency: 'JPY',
      },
    ],
  });
  t.same(res.body, { received: 3, stored: 3, duplicates: 0 });
  const { rows } = await stored(s);
  t.match(rows, [
    { event_type: 'click', agent: 'my-agent', kind: 'agent', operator: null },
    { event_type: 'conversion', amount_minor: 1999, currency: 'USD' },
    { event_type: 'conversion', amount_minor: 1500, currency: 'JPY' },
  ]);
  const revenue = await s.server.store.db
    .selectFrom('analytics_daily_revenue')
    .selectAll()
    .orderBy('currency')
    .execute();
  t.same(
    revenue.map((r) => [
      r.day,
      r.currency,
      r.product_id,
      Number(r.conversions),
      Number(r.amount_minor),
    ]),
    [
      ['2026-11-24', 'JPY', 'sku-2', 1, 1500],
      ['2026-11-24', 'USD', 'sku-1', 1, 1999],
    ],
  );
});

t.test('1,001 events are refused whole', async (t) => {
  const s = await server(t);
  const events = Array.from({ length: 1001 }, () => ({ type: 'view', product_id: 'sku-1' }));
  const res = await post(s, { events });
  t.equal(res.status, 422);
  t.equal(res.body.error.message, 'events must have at most 1000 items.');
  t.same((await stored(s)).rows, []);
  const thousand = await post(s, { events: events.slice(1) });
  t.same(thousand.body, { received: 1000, stored: 1000, duplicates: 0 }, '1,000 is the limit');
});

t.test(
  'a bad event is 422 naming its index, field and reason, and nothing is stored',
  async (t) => {
    const s = await server(t);
    const good = { type: 'view', product_id: 'sku-1' };
    const cases: [unknown, number, string][] = [
      [
        { type: 'conversion', product_id: 'sku-1', currency: 'USD' },
        422,
        'events[3].amount is required for a conversion.',
      ],
      [
        { type: 'conversion', product_id: 'sku-1', amount: 5 },
        422,
        'events[3].currency is required for a conversion.',
      ],
      [
        { type: 'conversion', product_id: 'sku-1', amount: 10.999, currency: 'USD' },
        422,
        'events[3].amount must have at most 2 decimal places for USD.',
      ],
      [
        { type: 'conversion', product_id: 'sku-1', amount: 5, currency: 'ABC' },
        422,
        'events[3].currency is not a known ISO 4217 currency.',
      ],
      [
        { type: 'view', product_id: 'sku-1', amount: 5 },
        422,
        'events[3].amount is only for conversions.',
      ],
      [
        { type: 'purchase', product_id: 'sku-1' },
        422,
        'events[3].type must be one of view, click, conversion.',
      ],
      [{ type: 'view', product_id: 'nope' }, 422, 'events[3].product_id names no product.'],
      [
        { type: 'view', product_id: 'sku-1', occurred_at: '2026-11-26T00:00:00Z' },
        422,
        'events[3].occurred_at must not be in the future.',
      ],
      [
        { type: 'view', product_id: 'sku-1', occurred_at: 'yesterday' },
        422,
        'events[3].occurred_at must be an ISO 8601 date-time',
      ],
      [
        { type: 'view', product_id: 'sku-1', colour: 'red' },
        422,
        "Unknown field 'events[3].colour'.",
      ],
    ];
    for (const [bad, status, message] of cases) {
      const res = await post(s, { events: [good, good, good, bad, good] });
      t.equal(res.status, status, message);
      t.ok(res.body.error.message.startsWith(message), `${res.body.error.message} | ${message}`);
    }
    const single = await post(s, { type: 'conversion', product_id: 'sku-1', amount: 5 });
    t.equal(
      single.body.error.message,
      'currency is required for a conversion.',
      'a single event names the field alone',
    );
    const missing = await post(s, { type: 'view' });
    t.equal(missing.body.error.message, 'product_id is required.');
    const rows = await stored(s);
    t.same(rows.rows, [], 'no interaction stored');
    t.same(rows.products, [], 'no rollup touched');
  },
);

t.test('an id makes a retry safe', async (t) => {
  const s = await server(t);
  const event = {
    id: 'order-1001',
    type: 'conversion',
    product_id: 'sku-1',
    amount: 42,
    currency: 'USD',
  };
  t.same((await post(s, event)).body, { received: 1, stored: 1, duplicates: 0 });
  t.same((await post(s, event)).body, { received: 1, stored: 0, duplicates: 1 });
  const batch = await post(s, {
    events: [event, { ...event, id: 'order-1002' }, { ...event, id: 'order-1002' }],
  });
  t.same(batch.body, { received: 3, stored: 1, duplicates: 2 }, 'also within one batch');
  const revenue = await s.request(
    'GET',
    '/v1/analytics/conversions?start_date=2026-11-25&end_date=2026-11-25',
  );
  t.equal(revenue.body.conversions, 2);
  t.equal(revenue.body.revenue, 84);
});
