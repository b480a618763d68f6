import t from 'tap';
import { allRoutes } from '../../src/http/routes/index.js';
import type { Permission, RouteDef } from '../../src/http/route.js';
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
    'limits',
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

/** Routes anyone may call. A new public route must be added here on purpose. */
const PUBLIC = new Set([
  'GET /healthz',
  'GET /v1/openapi.json',
  // Inbound platform webhooks: authenticated by the platform's signature, never a key.
  'POST /v1/integrations/:id/webhook',
  // Stripe's events about a stripe delivery's import: authenticated by Stripe-Signature.
  'POST /v1/feeds/:id/stripe-events',
]);

/** The permission CONTRACT part 5 gives a route, from its method and path alone. */
function contractPermission(route: RouteDef): Permission {
  if (PUBLIC.has(`${route.method.toUpperCase()} ${route.path}`)) return 'public';
  // Admin paths: the keys API and the audit log.
  if (/^\/v1\/(api-keys(\/|$)|audit-log$)/.test(route.path)) return 'admin';
  return route.method === 'get' ? 'read' : 'write';
}

t.test(
  'every route declares the permission CONTRACT part 5 gives its method and path',
  async (t) => {
    for (const route of allRoutes) {
      t.equal(
        route.permission,
        contractPermission(route),
        `${route.method.toUpperCase()} ${route.path}`,
      );
    }
  },
);

t.test('every route but the public ones answers 401 MISSING_API_KEY without a key', async (t) => {
  const s = await startTestServer(t);
  for (const route of allRoutes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, 'matrix-probe');
    const method = route.method.toUpperCase();
    const res = await s.request(method, path, {
      key: null,
      ...(method === 'POST' || method === 'PUT' ? { body: {} } : {}),
      headers: { prefer: 'envelope' },
    });
    if (route.permission === 'public') {
      t.not(res.status, 401, `${method} ${route.path} is public`);
    } else {
      t.equal(res.status, 401, `${method} ${route.path}`);
      t.equal(res.body?.error?.code, 'MISSING_API_KEY', `${method} ${route.path}`);
    }
  }
});
