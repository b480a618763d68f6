import t from 'tap';
import { clockAt, unix } from '../support/clock.js';
import { startTestServer, type Response } from '../support/server.js';

function limitHeaders(res: Response) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

t.test(
  'the burst window allows floor(burst/6) requests in 10 seconds, then 429 BURST_LIMIT_EXCEEDED',
  async (t) => {
    const clock = clockAt('2026-11-10T12:00:00.000Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const { secret } = await s.createKey('read_only', { rpm: 1000, burst: 65 }); // 10 per 10 s
    for (let i = 0; i < 10; i++) {
      t.equal(
        (await s.request('GET', '/v1/products', { key: secret })).status,
        200,
        `request ${i + 1}`,
      );
    }
    clock.advance(3);
    const refused = await s.request('GET', '/v1/products', { key: secret });
    t.equal(refused.status, 429);
    t.equal(refused.body.error.code, 'rate_limit_exceeded');
    t.match(refused.body.error.message, /at most 10 requests in 10 seconds/);
    t.equal(refused.headers.get('retry-after'), '7', 'the burst window opened 3 s ago');
    t.same(limitHeaders(refused), {
      limit: '1000',
      remaining: '990',
      reset: String(unix('2026-11-10T12:01:00Z')),
    });

    const envelope = await s.request('GET', '/v1/products', {
      key: secret,
      headers: { prefer: 'envelope' },
    });
    t.equal(envelope.status, 429);
    t.equal(envelope.body.success, false);
    t.equal(envelope.body.error.code, 'BURST_LIMIT_EXCEEDED');
    t.equal(envelope.headers.get('retry-after'), '7');

    clock.advance(6.5);
    const almost = await s.request('GET', '/v1/products', { key: secret });
    t.equal(almost.status, 429);
    t.equal(almost.headers.get('retry-after'), '1', 'half a second rounds up to 1');
    clock.advance(0.5);
    const next = await s.request('GET', '/v1/products', { key: secret });
    t.equal(next.status, 200, 'a new burst window opens 10 s after the first');
    t.equal(next.headers.get('x-ratelimit-remaining'), '989', 'refused requests counted nothing');
  },
);

t.test(
  'the minute window allows rpm requests, then 429 RATE_LIMIT_EXCEEDED until it ends',
  async (t) => {
    const clock = clockAt('2026-11-10T12:00:00.250Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const { secret } = await s.createKey('read_only', { rpm: 5, burst: 600 });
    const reset = String(Math.ceil(unix('2026-11-10T12:01:00.250Z')));
    for (let i = 0; i < 5; i++) {
      const res = await s.request('GET', '/v1/products', { key: secret });
      t.equal(res.status, 200);
      t.same(limitHeaders(res), { limit: '5', remaining: String(4 - i), reset });
      clock.advance(1);
    }
    clock.advance(15); // 20 s into the window
    const refused = await s.request('GET', '/v1/products', {
      key: secret,
      headers: { prefer: 'envelope' },
    });
    t.equal(refused.status, 429);
    t.equal(refused.body.error.code, 'RATE_LIMIT_EXCEEDED');
    t.same(refused.body.error.details, {
      field: 'Authorization',
      reason: 'over 5 requests a minute',
    });
    t.equal(refused.headers.get('retry-after'), '40');
    t.same(limitHeaders(refused), { limit: '5', remaining: '0', reset });
    const shapeA = await s.request('GET', '/v1/products', { key: secret });
    t.equal(shapeA.body.error.code, 'rate_limit_exceeded');
    t.equal(shapeA.headers.get('retry-after'), '40');

    clock.set('2026-11-10T12:01:00.249Z');
    const last = await s.request('GET', '/v1/products', { key: secret });
    t.equal(last.status, 429);
    t.equal(last.headers.get('retry-after'), '1');
    clock.set('2026-11-10T12:01:00.250Z');
    const again = await s.request('GET', '/v1/products', { key: secret });
    t.equal(again.status, 200, 'the window ends 60 s after it opened');
    t.same(limitHeaders(again), {
      limit: '5',
      remaining: '4',
      reset: String(Math.ceil(unix('2026-11-10T12:02:00.250Z'))),
    });
  },
);

t.test(
  'the monthly quota ends at UTC midnight of the 1st, and each month is counted apart',
  async (t) => {
    const clock = clockAt('2026-11-30T23:59:30.000Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const key = await s.createKey('read_only', { monthly: 3 });
    for (let i = 0; i < 3; i++) {
      t.equal((await s.request('GET', '/v1/products', { key: key.secret })).status, 200);
    }
    const refused = await s.request('GET', '/v1/products', {
      key: key.secret,
      headers: { prefer: 'envelope' },
    });
    t.equal(refused.status, 429);
    t.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    t.equal(refused.headers.get('retry-after'), '30', 'until 2026-12-01T00:00:00Z');
    t.equal(refused.headers.get('x-ratelimit-limit'), '100', 'headers still describe the minute');
    t.equal(refused.headers.get('x-ratelimit-remaining'), '97');
    const shapeA = await s.request('GET', '/v1/products', { key: key.secret });
    t.equal(shapeA.body.error.code, 'rate_limit_exceeded');
    t.match(shapeA.body.error.message, /3 requests per calendar month \(UTC\)/);

    clock.set('2026-11-30T23:59:59.999Z');
    const lastMs = await s.request('GET', '/v1/products', { key: key.secret });
    t.equal(lastMs.status, 429, 'the last millisecond of November is still November');
    t.equal(lastMs.headers.get('retry-after'), '1');
    clock.set('2026-12-01T00:00:00.000Z');
    t.equal((await s.request('GET', '/v1/products', { key: key.secret })).status, 200);

    await s.server.deps.limiter!.usage.flush();
    const rows = await s.server.store.db
      .selectFrom('api_key_usage')
      .selectAll()
      .where('api_key_id', '=', key.id)
      .orderBy('month')
      .execute();
    t.same(
      rows.map((r) => [r.month, r.requests]),
      [
        ['2026-11', 3],
        ['2026-12', 1],
      ],
    );
  },
);

t.test('when several limits refuse, the one with the longest wait answers', async (t) => {
  const clock = clockAt('2026-11-20T10:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const { secret } = await s.createKey('read_only', { rpm: 2, monthly: 2 });
  await s.request('GET', '/v1/products', { key: secret });
  await s.request('GET', '/v1/products', { key: secret });
  const refused = await s.request('GET', '/v1/products', {
    key: secret,
    headers: { prefer: 'envelope' },
  });
  t.equal(
    refused.body.error.code,
    'QUOTA_EXCEEDED',
    'not RATE_LIMIT_EXCEEDED: waiting a minute would not help',
  );
  t.equal(refused.headers.get('retry-after'), String(10 * 86400 + 14 * 3600));
});

t.test('200 concurrent requests on a key allowing 100 let exactly 100 through', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const { secret } = await s.createKey('read_only', { rpm: 100, burst: 1200 });
  const responses = await Promise.all(
    Array.from({ length: 200 }, () => s.request('GET', '/v1/products', { key: secret })),
  );
  const ok = responses.filter((r) => r.status === 200);
  const refused = responses.filter((r) => r.status === 429);
  t.equal(ok.length, 100);
  t.equal(refused.length, 100);
  t.same(
    ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b),
    Array.from({ length: 100 }, (_, i) => i),
    'each success saw its own remaining count: no two requests took the same slot',
  );
  t.ok(refused.every((r) => r.headers.get('x-ratelimit-remaining') === '0'));
  t.ok(refused.every((r) => r.headers.get('retry-after') === '60'));
});

t.test('monthly counts survive a restart', async (t) => {
  const clock = clockAt('2026-11-15T08:00:00.000Z');
  const first = await startTestServer(t, {}, { now: clock.now });
  const key = await first.createKey('read_only', { monthly: 3 });
  t.equal((await first.request('GET', '/v1/products', { key: key.secret })).status, 200);
  t.equal((await first.request('GET', '/v1/products', { key: key.secret })).status, 200);
  await first.server.close();

  clock.advance(3600);
  const second = await startTestServer(t, {}, { now: clock.now, dir: first.dir });
  t.equal((await second.request('GET', '/v1/products', { key: key.secret })).status, 200);
  const refused = await second.request('GET', '/v1/products', {
    key: key.secret,
    headers: { prefer: 'envelope' },
  });
  t.equal(refused.status, 429);
  t.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
});

t.test('each plan has its SPEC part 8 limits, and overrides replace them per key', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, { DEFAULT_PLAN: 'pro' }, { now: clock.now });
  const expected = {
    starter: { per_minute: 100, burst_per_minute: 200, burst_per_10_seconds: 33, monthly: 10_000 },
    pro: { per_minute: 1000, burst_per_minute: 2000, burst_per_10_seconds: 333, monthly: 100_000 },
    enterprise: {
      per_minute: 10_000,
      burst_per_minute: 20_000,
      burst_per_10_seconds: 3333,
      monthly: 1_000_000,
    },
    scale: {
      per_minute: 100_000,
      burst_per_minute: 200_000,
      burst_per_10_seconds: 33_333,
      monthly: null,
    },
  };
  for (const [plan, limits] of Object.entries(expected)) {
    const created = await s.request('POST', '/v1/api-keys', { body: { level: 'read_only', plan } });
    t.equal(created.status, 201);
    t.same(created.body.limits, limits, `${plan} limits`);
    const res = await s.request('GET', '/v1/products', { key: created.body.key });
    t.equal(res.headers.get('x-ratelimit-limit'), String(limits.per_minute), `${plan} header`);
  }
  const byDefault = await s.request('POST', '/v1/api-keys', { body: { level: 'read_only' } });
  t.equal(byDefault.body.plan, 'pro', 'DEFAULT_PLAN applies when no plan is given');
  const overridden = await s.request('POST', '/v1/api-keys', {
    body: { level: 'read_only', plan: 'starter', rpm: 7, burst: 12, monthly: 50 },
  });
  t.same(overridden.body.limits, {
    per_minute: 7,
    burst_per_minute: 12,
    burst_per_10_seconds: 2,
    monthly: 50,
  });
  t.match(overridden.body, { plan: 'starter', rpm: 7, burst: 12, monthly: 50 });
});

t.test('the starter plan allows 33 requests in 10 seconds', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const { secret } = await s.createKey('read_only');
  for (let i = 0; i < 33; i++) {
    const res = await s.request('GET', '/v1/products', { key: secret });
    if (res.status !== 200) t.fail(`request ${i + 1} answered ${res.status}`);
  }
  const refused = await s.request('GET', '/v1/products', {
    key: secret,
    headers: { prefer: 'envelope' },
  });
  t.equal(refused.body.error.code, 'BURST_LIMIT_EXCEEDED');
  t.equal(refused.headers.get('x-ratelimit-remaining'), '67');
});

t.test('errors after authentication carry the headers and count; 401s carry none', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const { secret } = await s.createKey('read_only', { rpm: 3 });
  const forbidden = await s.request('POST', '/v1/products', { key: secret, body: {} });
  t.equal(forbidden.status, 403);
  t.equal(forbidden.headers.get('x-ratelimit-remaining'), '2');
  const missing = await s.request('GET', '/v1/products/nope', { key: secret });
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('x-ratelimit-remaining'), '1');
  const invalid = await s.request('GET', '/v1/products?limit=0', { key: secret });
  t.equal(invalid.status, 400);
  t.equal(invalid.headers.get('x-ratelimit-remaining'), '0');
  const limited = await s.request('POST', '/v1/products', { key: secret, body: {} });
  t.equal(limited.status, 429, 'the limit is checked before the permission');

  const noKey = await s.request('GET', '/v1/products', { key: null });
  t.equal(noKey.status, 401);
  t.equal(noKey.headers.get('x-ratelimit-limit'), null);
  const badKey = await s.request('GET', '/v1/products', { key: 'ask_live_nope' });
  t.equal(badKey.status, 401);
  t.equal(badKey.headers.get('x-ratelimit-limit'), null);
});

t.test('RATE_LIMITS=off lets every request through with no rate-limit headers', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, { RATE_LIMITS: 'off' }, { now: clock.now });
  const { secret } = await s.createKey('read_only', { rpm: 1, burst: 6, monthly: 1 });
  for (let i = 0; i < 3; i++) {
    const res = await s.request('GET', '/v1/products', { key: secret });
    t.equal(res.status, 200);
    t.equal(res.headers.get('x-ratelimit-limit'), null);
  }
  t.equal(s.server.deps.limiter, undefined);
});
