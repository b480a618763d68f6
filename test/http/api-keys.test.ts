import t from 'tap';
import { createApiKey, hashKey } from '../../src/domain/access/api-keys.js';
import type { Environment } from '../../src/config.js';
import { clockAt } from '../support/clock.js';
import { startTestServer } from '../support/server.js';

t.test(
  'a created key is shown once; the list shows its prefix, last 4, level, plan and dates, never the key',
  async (t) => {
    const clock = clockAt('2026-11-10T12:00:00.000Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const created = await s.request('POST', '/v1/api-keys', {
      body: { level: 'read_write', name: 'catalogue sync', plan: 'pro', rpm: 500 },
    });
    t.equal(created.status, 201);
    const secret: string = created.body.key;
    t.match(secret, /^ask_live_[A-Za-z0-9]{40}$/);
    t.match(created.body, {
      id: /^key_/,
      name: 'catalogue sync',
      level: 'read_write',
      environment: 'production',
      prefix: 'ask_live_',
      last4: secret.slice(-4),
      plan: 'pro',
      rpm: 500,
      burst: null,
      monthly: null,
      limits: {
        per_minute: 500,
        burst_per_minute: 2000,
        burst_per_10_seconds: 333,
        monthly: 100000,
      },
      created_at: '2026-11-10T12:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
    });

    clock.advance(90);
    t.equal((await s.request('GET', '/v1/products', { key: secret })).status, 200);
    const list = await s.request('GET', '/v1/api-keys');
    t.equal(list.status, 200);
    t.notOk(list.text.includes(secret), 'the key itself is never listed');
    t.notOk(list.text.includes(hashKey(secret)), 'nor its hash');
    const listed = list.body.api_keys.find((k: any) => k.id === created.body.id);
    t.notOk('key' in listed);
    const { key: _key, ...withoutKey } = created.body;
    t.same(listed, { ...withoutKey, last_used_at: '2026-11-10T12:01:30.000Z' });
    t.equal(list.body.api_keys.length, 4, 'with the three keys the test server made');
  },
);

t.test(
  'a revoked key is refused on the very next request; revoking again changes nothing',
  async (t) => {
    const s = await startTestServer(t);
    const key = await s.createKey('read_only');
    t.equal((await s.request('GET', '/v1/products', { key: key.secret })).status, 200);
    const revoked = await s.request('DELETE', `/v1/api-keys/${key.id}`);
    t.equal(revoked.status, 200);
    t.match(revoked.body.revoked_at, /Z$/);
    const refused = await s.request('GET', '/v1/products', {
      key: key.secret,
      headers: { prefer: 'envelope' },
    });
    t.equal(refused.status, 401);
    t.equal(refused.body.error.code, 'INVALID_API_KEY');
    t.match(refused.body.error.message, `The API key ${key.id} was revoked`);
    const again = await s.request('DELETE', `/v1/api-keys/${key.id}`);
    t.equal(again.status, 200);
    t.equal(again.body.revoked_at, revoked.body.revoked_at);
    const unknown = await s.request('DELETE', '/v1/api-keys/key_doesnotexist');
    t.equal(unknown.status, 404);
  },
);

t.test(
  'revocation during traffic: every request that starts after the DELETE answers is refused',
  async (t) => {
    const s = await startTestServer(t);
    const key = await s.createKey('read_only', { rpm: 1_000_000, burst: 6_000_000 });
    type Outcome = { started: number; ended: number; status: number };
    const loops: Outcome[][] = [];
    let revokedAt = Infinity;
    let revokeStarted = Infinity;
    // Each client runs until it has been served at least once before the DELETE was sent and
    // has started three requests after its answer: counted, not timed, so a slow machine
    // (the first requests of a fresh store on a loaded one) cannot leave either side empty.
    let servedBefore!: () => void;
    const everyServed = new Promise<void>((resolve) => (servedBefore = resolve));
    let served = 0;
    const runLoop = async (outcomes: Outcome[]) => {
      for (;;) {
        const started = performance.now();
        const res = await s.request('GET', '/v1/products?limit=1', { key: key.secret });
        outcomes.push({ started, ended: performance.now(), status: res.status });
        if (outcomes.length === 1 && ++served === 6) servedBefore();
        if (outcomes.filter((o) => o.started >= revokedAt).length >= 3) return;
      }
    };
    const running = Array.from({ length: 6 }, () => {
      const outcomes: Outcome[] = [];
      loops.push(outcomes);
      return runLoop(outcomes);
    });
    await everyServed;
    revokeStarted = performance.now();
    const revoked = await s.request('DELETE', `/v1/api-keys/${key.id}`);
    revokedAt = performance.now();
    t.equal(revoked.status, 200);
    await Promise.all(running);

    const all = loops.flat();
    t.ok(
      all.every((o) => o.status === 200 || o.status === 401),
      'only 200s and 401s',
    );
    const after = all.filter((o) => o.started >= revokedAt);
    const before = all.filter((o) => o.ended <= revokeStarted);
    t.ok(after.length > 0 && before.length > 0, 'traffic ran on both sides of the revocation');
    t.ok(
      after.every((o) => o.status === 401),
      `all ${after.length} requests after it are 401`,
    );
    t.ok(
      before.every((o) => o.status === 200),
      `all ${before.length} requests before it are 200`,
    );
    for (const outcomes of loops) {
      const first401 = outcomes.findIndex((o) => o.status === 401);
      t.ok(
        first401 >= 0 && outcomes.slice(first401).every((o) => o.status === 401),
        'once refused, a client is never served again',
      );
    }
  },
);

t.test('a key of another environment is 401 INVALID_API_KEY naming its environment', async (t) => {
  const prefixes: Record<Environment, string> = {
    production: 'ask_live_',
    staging: 'ask_stg_',
    sandbox: 'ask_test_',
  };
  for (const environment of Object.keys(prefixes) as Environment[]) {
    const s = await startTestServer(t, { ENVIRONMENT: environment });
    const own = await s.request('POST', '/v1/api-keys', { body: { level: 'read_only' } });
    t.ok(
      own.body.key.startsWith(prefixes[environment]),
      `${environment} keys are ${prefixes[environment]}`,
    );
    t.equal((await s.request('GET', '/v1/products', { key: own.body.key })).status, 200);
    for (const other of Object.keys(prefixes) as Environment[]) {
      if (other === environment) continue;
      // Even a key stored in this very store is refused when it belongs elsewhere.
      const { secret } = await createApiKey(
        s.server.store.db,
        { level: 'admin' },
        { environment: other, defaultPlan: 'starter' },
      );
      const res = await s.request('GET', '/v1/products', {
        key: secret,
        headers: { prefer: 'envelope' },
      });
      t.equal(res.status, 401, `${other} key on ${environment}`);
      t.equal(res.body.error.code, 'INVALID_API_KEY');
      t.match(
        res.body.error.message,
        `belongs to the ${other} environment; this server is the ${environment} environment`,
      );
      const shapeA = await s.request('GET', '/v1/products', { key: secret });
      t.equal(shapeA.body.error.code, 'unauthorized');
    }
  }
});

t.test('creating a key validates level, plan and overrides, and needs an admin key', async (t) => {
  const s = await startTestServer(t);
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'level'],
    [{ level: 'root' }, 'level'],
    [{ level: 'admin', plan: 'gold' }, 'plan'],
    [{ level: 'admin', rpm: 0 }, 'rpm'],
    [{ level: 'admin', burst: 5 }, 'burst'],
    [{ level: 'admin', monthly: 1.5 }, 'monthly'],
    [{ level: 'admin', key: 'ask_live_mine' }, 'key'],
  ];
  for (const [body, field] of cases) {
    const res = await s.request('POST', '/v1/api-keys', { body, headers: { prefer: 'envelope' } });
    t.equal(res.status, 422, JSON.stringify(body));
    t.equal(res.body.error.details.field, field);
  }
  const byReadWrite = await s.request('POST', '/v1/api-keys', {
    key: s.keys.read_write,
    body: { level: 'admin' },
  });
  t.equal(byReadWrite.status, 403, 'a read_write key cannot make itself an admin key');
});
