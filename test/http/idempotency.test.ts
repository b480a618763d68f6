import t from 'tap';
import { productBody, startTestServer } from '../support/server.js';

t.test(
  'the same Idempotency-Key and body replays the first response without a second product',
  async (t) => {
    const s = await startTestServer(t);
    const headers = { 'idempotency-key': 'order-42' };
    const first = await s.request('POST', '/v1/products', { body: productBody(), headers });
    const second = await s.request('POST', '/v1/products', { body: productBody(), headers });
    t.equal(first.status, 201);
    t.equal(second.status, 201);
    t.same(second.body, first.body);
    t.equal(second.headers.get('idempotent-replayed'), 'true');
    t.equal(first.headers.get('idempotent-replayed'), null);
    const list = await s.request('GET', '/v1/products');
    t.equal(list.body.pagination.total, 1, 'one product, not two');
    const events = await s.server.store.db.selectFrom('events').selectAll().execute();
    t.equal(events.length, 1, 'one event');
  },
);

t.test(
  'the same key with another body is 409 conflict; other keys and other API keys are independent',
  async (t) => {
    const s = await startTestServer(t);
    const headers = { 'idempotency-key': 'k1' };
    t.equal(
      (await s.request('POST', '/v1/products', { body: productBody({ name: 'A' }), headers }))
        .status,
      201,
    );
    const reuse = await s.request('POST', '/v1/products', {
      body: productBody({ name: 'B' }),
      headers: { ...headers, prefer: 'envelope' },
    });
    t.equal(reuse.status, 409);
    t.equal(reuse.body.error.code, 'RESOURCE_CONFLICT');
    t.equal(reuse.body.error.details.field, 'Idempotency-Key');
    t.equal(
      (
        await s.request('POST', '/v1/products', {
          body: productBody({ name: 'B' }),
          headers: { 'idempotency-key': 'k2' },
        })
      ).status,
      201,
    );
    const otherKey = await s.request('POST', '/v1/products', {
      key: s.keys.read_write,
      body: productBody({ name: 'C' }),
      headers,
    });
    t.equal(otherKey.status, 201, 'keys are scoped to the API key');
    t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 3);
  },
);

t.test('a refused request is replayed as refused; an over-long key is 400', async (t) => {
  const s = await startTestServer(t);
  const headers = { 'idempotency-key': 'bad-1' };
  const first = await s.request('POST', '/v1/products', {
    body: productBody({ price: -1 }),
    headers,
  });
  t.equal(first.status, 422);
  const again = await s.request('POST', '/v1/products', {
    body: productBody({ price: -1 }),
    headers,
  });
  t.equal(again.status, 422);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.same(again.body, first.body);
  const long = await s.request('POST', '/v1/products', {
    body: productBody(),
    headers: { 'idempotency-key': 'k'.repeat(256) },
  });
  t.equal(long.status, 400);
  t.equal(long.body.error.details, 'Idempotency-Key: must be at most 255 characters');
  t.equal(
    (
      await s.request('POST', '/v1/products', {
        body: productBody(),
        headers: { 'idempotency-key': 'k'.repeat(255) },
      })
    ).status,
    201,
  );
});

t.test('a key is forgotten after 24 hours', async (t) => {
  let now = new Date('2026-11-01T00:00:00Z');
  const s = await startTestServer(t, {}, { now: () => now });
  const headers = { 'idempotency-key': 'day' };
  const first = await s.request('POST', '/v1/products', { body: productBody(), headers });
  now = new Date('2026-11-02T00:00:01Z');
  const later = await s.request('POST', '/v1/products', { body: productBody(), headers });
  t.equal(later.status, 201);
  t.not(later.body.id, first.body.id, 'a new product after the key expired');
});

t.test('concurrent requests with one key create one product', async (t) => {
  const s = await startTestServer(t);
  const headers = { 'idempotency-key': 'race' };
  const results = await Promise.all(
    Array.from({ length: 10 }, () =>
      s.request('POST', '/v1/products', { body: productBody(), headers }),
    ),
  );
  const statuses = results.map((r) => r.status);
  t.ok(
    statuses.every((st) => st === 201 || st === 409),
    `only 201 or 409: ${statuses.join(',')}`,
  );
  t.ok(statuses.includes(201));
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 1);
});
