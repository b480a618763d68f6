import { sql } from 'kysely';
import Database from 'better-sqlite3';
import t from 'tap';
import { productBody, startTestServer } from '../support/server.js';

t.test(
  'every response carries X-Request-Id and X-API-Version; a client request id is echoed',
  async (t) => {
    const s = await startTestServer(t);
    const ok = await s.request('GET', '/v1/products');
    t.match(ok.headers.get('x-request-id'), /^req_[A-Za-z0-9]{20}$/);
    t.equal(ok.headers.get('x-api-version'), 'v1');
    const err = await s.request('GET', '/v1/products', { key: null });
    t.match(err.headers.get('x-request-id'), /^req_/);
    t.equal(err.headers.get('x-api-version'), 'v1');
    const mine = await s.request('GET', '/v1/products', {
      headers: { 'x-request-id': 'trace-123.abc' },
    });
    t.equal(mine.headers.get('x-request-id'), 'trace-123.abc');
    const junk = await s.request('GET', '/v1/products', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    t.match(junk.headers.get('x-request-id'), /^req_/, 'an unsafe id is replaced');
  },
);

t.test(
  'authentication errors: missing, malformed, unknown, revoked and other-environment keys',
  async (t) => {
    const s = await startTestServer(t);
    const missing = await s.request('GET', '/v1/products', { key: null });
    t.equal(missing.status, 401);
    t.same(missing.body.error.code, 'unauthorized');
    t.equal(missing.headers.get('www-authenticate'), 'Bearer realm="agentshelf"');
    const missingB = await s.request('GET', '/v1/products', {
      key: null,
      headers: { prefer: 'envelope' },
    });
    t.equal(missingB.body.error.code, 'MISSING_API_KEY');

    const basic = await s.request('GET', '/v1/products', {
      key: null,
      headers: { authorization: 'Basic abc', prefer: 'envelope' },
    });
    t.equal(basic.status, 401);
    t.equal(basic.body.error.code, 'INVALID_API_KEY');
    const unknown = await s.request('GET', '/v1/products', {
      key: 'ask_live_doesnotexist',
      headers: { prefer: 'envelope' },
    });
    t.equal(unknown.status, 401);
    t.equal(unknown.body.error.code, 'INVALID_API_KEY');
    t.equal(unknown.body.error.message, 'The API key is not valid.');

    const { id, secret } = await s.createKey('read_only');
    t.equal((await s.request('GET', '/v1/products', { key: secret })).status, 200);
    const revoke = await s.request('DELETE', `/v1/api-keys/${id}`);
    t.equal(revoke.status, 200);
    t.ok(revoke.body.revoked_at);
    const revoked = await s.request('GET', '/v1/products', {
      key: secret,
      headers: { prefer: 'envelope' },
    });
    t.equal(revoked.status, 401, 'revocation holds on the very next request');
    t.equal(revoked.body.error.code, 'INVALID_API_KEY');
    t.match(revoked.body.error.message, /was revoked at/);

    const sandboxKey = `ask_test_${'a'.repeat(40)}`;
    const other = await s.request('GET', '/v1/products', { key: sandboxKey });
    t.equal(other.status, 401);
    t.equal(other.body.error.code, 'unauthorized');
    t.equal(
      other.body.error.message,
      'This API key belongs to the sandbox environment; this server is the production environment.',
    );
    const stg = await s.request('GET', '/v1/products', { key: `ask_stg_${'a'.repeat(40)}` });
    t.match(stg.body.error.message, /staging environment/);
  },
);

t.test('a sandbox server issues ask_test_ keys and refuses live keys', async (t) => {
  const s = await startTestServer(t, { ENVIRONMENT: 'sandbox' });
  t.match(s.keys.admin, /^ask_test_[A-Za-z0-9]{40}$/);
  t.equal((await s.request('GET', '/v1/products')).status, 200);
  const live = await s.request('GET', '/v1/products', { key: `ask_live_${'b'.repeat(40)}` });
  t.equal(live.status, 401);
  t.match(
    live.body.error.message,
    /belongs to the production environment; this server is the sandbox environment/,
  );
});

t.test('shape B wraps successes and errors alike and says so in Preference-Applied', async (t) => {
  const s = await startTestServer(t);
  const created = await s.request('POST', '/v1/products', {
    body: productBody({ id: 'B1' }),
    headers: { prefer: 'return=minimal, envelope' },
  });
  t.equal(created.status, 201);
  t.equal(created.headers.get('preference-applied'), 'envelope');
  t.equal(created.body.success, true);
  t.equal(created.body.data.id, 'B1');
  t.equal(created.body.meta.request_id, created.headers.get('x-request-id'));
  t.match(created.body.meta.timestamp, /Z$/);
  const list = await s.request('GET', '/v1/products', { headers: { prefer: 'envelope' } });
  t.same(Object.keys(list.body.data), ['products', 'pagination']);
  const notFound = await s.request('GET', '/v1/products/nope', { headers: { prefer: 'envelope' } });
  t.equal(notFound.status, 404);
  t.same(notFound.body, {
    success: false,
    error: {
      code: 'RESOURCE_NOT_FOUND',
      message: "No product with id 'nope'.",
      details: { field: 'id', reason: 'not found' },
    },
    meta: {
      request_id: notFound.headers.get('x-request-id'),
      timestamp: notFound.body.meta.timestamp,
    },
  });
  const plain = await s.request('GET', '/v1/products/nope');
  t.same(plain.body, {
    error: { code: 'not_found', message: "No product with id 'nope'.", details: 'id: not found' },
  });
  t.equal(plain.headers.get('preference-applied'), null);
  const taken = await s.request('POST', '/v1/products', {
    body: productBody({ id: 'B1' }),
    headers: { prefer: 'envelope' },
  });
  t.equal(taken.body.error.code, 'RESOURCE_ALREADY_EXISTS');
  const missing = await s.request('POST', '/v1/products', {
    body: { price: 1 },
    headers: { prefer: 'envelope' },
  });
  t.equal(missing.body.error.code, 'MISSING_REQUIRED_FIELD');
  t.same(missing.body.error.details, { field: 'name', reason: 'is required' });
  const invalid = await s.request('POST', '/v1/products', {
    body: productBody({ status: 'x' }),
    headers: { prefer: 'envelope' },
  });
  t.equal(invalid.body.error.code, 'INVALID_FIELD_VALUE');
  const unknown = await s.request('POST', '/v1/products', {
    body: productBody({ x: 1 }),
    headers: { prefer: 'envelope' },
  });
  t.equal(unknown.body.error.code, 'VALIDATION_ERROR');
});

t.test('malformed bodies: bad JSON, wrong content type, over 1 MiB, not an object', async (t) => {
  const s = await startTestServer(t);
  const bad = await s.request('POST', '/v1/products', {
    raw: '{"name": "x",',
    headers: { 'content-type': 'application/json', prefer: 'envelope' },
  });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'INVALID_REQUEST');
  t.equal(bad.body.error.message, 'The request body is not valid JSON.');
  const form = await s.request('POST', '/v1/products', {
    raw: 'name=x&price=1',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(form.status, 400);
  t.equal(form.body.error.code, 'invalid_request');
  t.equal(form.body.error.details, 'Content-Type: must be application/json');
  const huge = JSON.stringify(productBody({ description: 'x'.repeat(1024 * 1024) }));
  const big = await s.request('POST', '/v1/products', {
    raw: huge,
    headers: { 'content-type': 'application/json' },
  });
  t.equal(big.status, 413);
  t.equal(big.body.error.code, 'invalid_request');
  const justUnder = JSON.stringify(
    productBody({ attributes: { note: 'y'.repeat(1024 * 1024 - 200) } }),
  );
  t.ok(Buffer.byteLength(justUnder) < 1024 * 1024);
  t.equal(
    (
      await s.request('POST', '/v1/products', {
        raw: justUnder,
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    201,
    'a body just under 1 MiB is accepted',
  );
  for (const raw of ['[1,2]', '"text"', '42', 'null']) {
    const res = await s.request('POST', '/v1/products', {
      raw,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(res.status, 400, `body ${raw}`);
    t.equal(res.body.error.code, 'invalid_request', `body ${raw}`);
  }
  const charset = await s.request('POST', '/v1/products', {
    raw: JSON.stringify(productBody()),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.equal(charset.status, 201, 'a charset parameter is fine');
});

t.test(
  'X-API-Version: absent or v1 is served, anything else is 400 naming the supported versions',
  async (t) => {
    const s = await startTestServer(t);
    t.equal(
      (await s.request('GET', '/v1/products', { headers: { 'x-api-version': 'v1' } })).status,
      200,
    );
    const v2 = await s.request('GET', '/v1/products', { headers: { 'x-api-version': 'v2' } });
    t.equal(v2.status, 400);
    t.equal(v2.body.error.code, 'invalid_parameter');
    t.equal(v2.body.error.message, "X-API-Version 'v2' is not supported; supported versions: v1.");
    const v2b = await s.request('GET', '/v1/products', {
      headers: { 'x-api-version': '2024-01-01', prefer: 'envelope' },
    });
    t.equal(v2b.body.error.code, 'INVALID_FIELD_VALUE');
  },
);

t.test(
  'unknown routes are 404 and known paths with another method 405, both as JSON',
  async (t) => {
    const s = await startTestServer(t);
    const none = await s.request('GET', '/v1/nothing');
    t.equal(none.status, 404);
    t.equal(none.body.error.code, 'not_found');
    const root = await s.request('GET', '/', { key: null });
    t.equal(root.status, 404);
    const patch = await s.request('PATCH', '/v1/products/x');
    t.equal(patch.status, 405);
    t.equal(patch.body.error.code, 'invalid_request');
    t.match(patch.headers.get('allow'), /PUT/);
  },
);

t.test('a 500 shows no internals and is logged with its request id', async (t) => {
  const s = await startTestServer(t);
  // Break the store from outside, as a disk or operator error would.
  const location = s.server.store.location;
  if (location.dialect === 'sqlite') {
    const other = new Database(location.file);
    other.exec('DROP TABLE products');
    other.close();
  } else {
    await sql`drop table products cascade`.execute(s.server.store.db);
  }
  const res = await s.request('GET', '/v1/products/x', { headers: { prefer: 'envelope' } });
  t.equal(res.status, 500);
  t.equal(res.body.error.code, 'INTERNAL_ERROR');
  const id = res.headers.get('x-request-id');
  t.equal(
    res.body.error.message,
    `An unexpected error occurred. Quote request id ${id} when you report it.`,
  );
  t.notMatch(res.text, /products|SQLITE|table|stack|at /i, 'no SQL, table name or stack trace');
  const plain = await s.request('GET', '/v1/products/x');
  t.same(Object.keys(plain.body.error), ['code', 'message', 'details']);
  t.equal(plain.body.error.code, 'internal_error');
});

t.test('a draining server answers 503 service_unavailable with Retry-After', async (t) => {
  const s = await startTestServer(t);
  s.server.deps.lifecycle.shuttingDown = true;
  const res = await s.request('GET', '/v1/products');
  t.equal(res.status, 503);
  t.equal(res.body.error.code, 'service_unavailable');
  t.equal(res.headers.get('retry-after'), '1');
  s.server.deps.lifecycle.shuttingDown = false;
});
