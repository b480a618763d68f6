import fc from 'fast-check';
import t from 'tap';
import { formatMinorUnits, maxMinorUnits, toMinorUnits } from '../../src/domain/money.js';
import { CURRENCIES, product } from '../support/products.js';
import { startTestServer } from '../support/server.js';

// The reads send the JSON the store writes (db/sqlite/product-json.ts); the writes answer with
// JSON.stringify of the product in JavaScript. The two must agree byte for byte.

// The generator of products the API accepts is shared: test/support/products.ts.

t.test('a product read from the store is the JSON its write answered with', async (t) => {
  const s = await startTestServer(t);
  const written: { id: string; created_at: string; text: string }[] = [];
  await fc.assert(
    fc.asyncProperty(product, async (p) => {
      const minor = Math.round(maxMinorUnits(p.currency) * p.share);
      const price = formatMinorUnits(minor, p.currency);
      const created = await s.request('POST', '/v1/products', {
        body: {
          name: p.name,
          description: p.description,
          price,
          currency: p.currency,
          status: p.status,
          category: p.category?.join(' > ') ?? null,
          images: p.images,
          attributes: { ...p.extra, ...(p.brand ? { brand: p.brand } : {}) },
        },
      });
      if (created.status !== 201) throw new Error(`create answered ${created.text}`);
      t.equal(toMinorUnits(created.body.price, p.currency), minor, 'the price is exact');
      const got = await s.request('GET', `/v1/products/${created.body.id}`);
      t.equal(got.status, 200);
      t.equal(got.headers.get('content-type'), 'application/json; charset=utf-8');
      t.equal(got.text, created.text, `${created.body.id} reads as it was written`);
      written.push({
        id: created.body.id,
        created_at: created.body.created_at,
        text: created.text,
      });
    }),
    { numRuns: 150 },
  );

  written.sort((a, b) =>
    a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
  );
  const page = await s.request('GET', '/v1/products?limit=100&offset=20');
  const pagination = { limit: 100, offset: 20, total: written.length, has_more: true };
  t.equal(
    page.text,
    `{"products":[${written
      .slice(20, 120)
      .map((w) => w.text)
      .join(',')}],"pagination":${JSON.stringify(pagination)}}`,
    'a page is the written products in order, with its pagination',
  );

  const empty = await s.request('GET', '/v1/products?status=active&category=Nowhere');
  t.same(empty.body, {
    products: [],
    pagination: { limit: 50, offset: 0, total: 0, has_more: false },
  });

  const wrapped = await s.request('GET', `/v1/products/${written[0]!.id}`, {
    headers: { prefer: 'envelope' },
  });
  t.ok(wrapped.text.startsWith(`{"success":true,"data":${written[0]!.text},"meta":{`));
  t.same(wrapped.body.data, JSON.parse(written[0]!.text));
  t.match(wrapped.body.meta, { request_id: /^req_/, timestamp: String });
  const wrappedPage = await s.request('GET', '/v1/products?limit=2', {
    headers: { prefer: 'envelope' },
  });
  t.same(wrappedPage.body.data.products, [
    JSON.parse(written[0]!.text),
    JSON.parse(written[1]!.text),
  ]);
});

t.test('the largest price of every kind of currency is exact', async (t) => {
  const s = await startTestServer(t);
  for (const currency of CURRENCIES) {
    const max = formatMinorUnits(maxMinorUnits(currency), currency);
    const created = await s.request('POST', '/v1/products', {
      body: { name: 'Dear', price: max, currency },
    });
    t.equal(created.status, 201, `${currency} ${max}`);
    t.equal(toMinorUnits(created.body.price, currency), maxMinorUnits(currency), 'exact');
    const got = await s.request('GET', `/v1/products/${created.body.id}`);
    t.equal(got.text, created.text);
  }
  const over = await s.request('POST', '/v1/products', {
    body: { name: 'Dearer', price: '1000000000000.001', currency: 'KWD' },
  });
  t.equal(over.status, 422);
  t.equal(over.body.error.details, 'price: must be at most 1000000000000');
});

t.test('a body with a __proto__ key anywhere is refused, and nothing is written', async (t) => {
  const s = await startTestServer(t);
  const bodies = [
    '{"name":"Poisoned","price":"1.00","attributes":{"x_":[{"__proto__":false}]}}',
    '{"name":"Poisoned","price":"1.00","attributes":{"__proto__":{"admin":true}}}',
    '{"__proto__":{"status":"active"},"name":"Poisoned","price":"1.00"}',
    '{"name":"Poisoned","price":"1.00","attributes":{"\\u005f_proto__":1}}',
  ];
  for (const raw of bodies) {
    const refused = await s.request('POST', '/v1/products', {
      raw,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(refused.status, 400, raw);
    t.equal(refused.body.error.code, 'invalid_request');
    t.equal(refused.body.error.message, 'The request body has a "__proto__" key.');
    t.equal(refused.body.error.details, 'body: has a "__proto__" key, which is not accepted');
  }
  const list = await s.request('GET', '/v1/products');
  t.equal(list.body.pagination.total, 0, 'no product was created');
});
