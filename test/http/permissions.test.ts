import t from 'tap';
import { allRoutes } from '../../src/http/routes/index.js';
import type { Permission } from '../../src/http/route.js';
import { productBody, startTestServer } from '../support/server.js';

const LEVELS = ['read_only', 'read_write', 'admin'] as const;
const ALLOWED: Record<Permission, readonly string[]> = {
  public: LEVELS,
  read: LEVELS,
  write: ['read_write', 'admin'],
  admin: ['admin'],
};

t.test('every route lets exactly the levels CONTRACT part 5 gives it through', async (t) => {
  const s = await startTestServer(t);
  t.ok(allRoutes.length >= 8, 'the matrix covers every route that exists');
  for (const route of allRoutes) {
    for (const level of LEVELS) {
      // A product to act on, fresh for each call so deletes do not interfere.
      const id = `perm-${route.operationId}-${level}`;
      await s.request('POST', '/v1/products', { body: productBody({ id }) });
      const path = route.path.replace(
        ':id',
        route.path.startsWith('/v1/api-keys') ? 'key_doesnotexist' : id,
      );
      const body =
        route.method === 'post' || route.method === 'put'
          ? route.path.startsWith('/v1/api-keys')
            ? { level: 'read_only' }
            : productBody(route.method === 'put' ? {} : { id: `${id}-new` })
          : undefined;
      const res = await s.request(route.method.toUpperCase(), path, {
        key: s.keys[level],
        ...(body ? { body: route.method === 'put' ? { name: 'changed' } : body } : {}),
      });
      const allowed = ALLOWED[route.permission].includes(level);
      if (allowed) {
        t.not(res.status, 403, `${level} may ${route.method.toUpperCase()} ${route.path}`);
        t.ok(
          res.status < 500,
          `${level} ${route.method.toUpperCase()} ${route.path} answered ${res.status}`,
        );
      } else {
        t.equal(res.status, 403, `${level} may not ${route.method.toUpperCase()} ${route.path}`);
        t.equal(res.body.error.code, 'forbidden');
        t.match(res.body.error.message, new RegExp(`This ${level} key cannot`));
      }
    }
  }
});

t.test('a forbidden write leaves nothing behind', async (t) => {
  const s = await startTestServer(t);
  const res = await s.request('POST', '/v1/products', {
    key: s.keys.read_only,
    body: productBody(),
    headers: { prefer: 'envelope' },
  });
  t.equal(res.status, 403);
  t.equal(res.body.error.code, 'INSUFFICIENT_PERMISSIONS');
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 0);
});

t.test('the key API shows keys without the key, returns the key once, and revokes', async (t) => {
  const s = await startTestServer(t);
  const created = await s.request('POST', '/v1/api-keys', {
    body: { level: 'read_write', name: 'ci', plan: 'pro' },
  });
  t.equal(created.status, 201);
  t.match(created.body.key, /^ask_live_[A-Za-z0-9]{40}$/);
  t.equal(created.body.last4, created.body.key.slice(-4));
  t.equal(created.body.plan, 'pro');
  const list = await s.request('GET', '/v1/api-keys');
  t.equal(list.body.api_keys.length, 4);
  t.notMatch(list.text, created.body.key, 'the key itself never appears again');
  const mine = list.body.api_keys.find((k: { id: string }) => k.id === created.body.id);
  t.same(Object.keys(mine).sort(), [
    'burst',
    'created_at',
    'environment',
    'id',
    'last4',
    'last_used_at',
    'level',
    'monthly',
    'name',
    'plan',
    'prefix',
    'revoked_at',
    'rpm',
  ]);
  t.equal((await s.request('GET', '/v1/products', { key: created.body.key })).status, 200);
  t.equal((await s.request('DELETE', `/v1/api-keys/${created.body.id}`)).status, 200);
  t.equal((await s.request('GET', '/v1/products', { key: created.body.key })).status, 401);
  t.equal((await s.request('DELETE', '/v1/api-keys/key_nope')).status, 404);
  const bad = await s.request('POST', '/v1/api-keys', { body: { level: 'root' } });
  t.equal(bad.status, 422);
  t.equal(bad.body.error.details, 'level: must be one of read_only, read_write, admin');
  const stored = await s.server.store.db
    .selectFrom('api_keys')
    .select('key_hash')
    .where('id', '=', created.body.id)
    .executeTakeFirstOrThrow();
  t.match(stored.key_hash, /^[0-9a-f]{64}$/, 'only the SHA-256 is stored');
});
