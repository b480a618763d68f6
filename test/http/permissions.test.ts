import t from 'tap';
import type { KeyLevel } from '../../src/db/schema.js';
import type { Permission, RouteDef } from '../../src/http/route.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { startTestServer } from '../support/server.js';

/** Routes anyone may call. A new public route must be added here on purpose. */
const PUBLIC = new Set(['GET /healthz', 'GET /v1/openapi.json']);

/** CONTRACT part 5: admin paths are the keys API and the audit log. */
function isAdminPath(path: string): boolean {
  return path === '/v1/api-keys' || path.startsWith('/v1/api-keys/') || path === '/v1/audit-log';
}

/** The permission CONTRACT part 5 gives a route, from its method and path alone. */
function contractPermission(route: RouteDef): Permission {
  if (PUBLIC.has(`${route.method.toUpperCase()} ${route.path}`)) return 'public';
  if (isAdminPath(route.path)) return 'admin';
  return route.method === 'get' ? 'read' : 'write';
}

const LEVELS_ALLOWED: Record<Permission, (KeyLevel | 'none')[]> = {
  public: ['none', 'read_only', 'read_write', 'admin'],
  read: ['read_only', 'read_write', 'admin'],
  write: ['read_write', 'admin'],
  admin: ['admin'],
};

t.test('every route declares the permission CONTRACT part 5 gives it', async (t) => {
  t.ok(allRoutes.length > 0);
  for (const route of allRoutes) {
    t.equal(
      route.permission,
      contractPermission(route),
      `${route.method.toUpperCase()} ${route.path}`,
    );
  }
});

t.test(
  'permission matrix: each route answers 401 without a key, 403 below its level, and serves the rest',
  async (t) => {
    const s = await startTestServer(t);
    const callers: [KeyLevel | 'none', string | null][] = [
      ['none', null],
      ['read_only', s.keys.read_only],
      ['read_write', s.keys.read_write],
      ['admin', s.keys.admin],
    ];
    for (const route of allRoutes) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, 'matrix-probe-$1');
      const method = route.method.toUpperCase();
      const allowed = LEVELS_ALLOWED[contractPermission(route)];
      for (const [level, key] of callers) {
        const res = await s.request(method, path, {
          key,
          ...(method === 'POST' || method === 'PUT' ? { body: {} } : {}),
          headers: { prefer: 'envelope' },
        });
        const what = `${method} ${route.path} as ${level}: ${res.status}`;
        if (allowed.includes(level)) {
          t.not(res.status, 401, what);
          t.not(res.status, 403, what);
        } else if (level === 'none') {
          t.equal(res.status, 401, what);
          t.equal(res.body?.error?.code, 'MISSING_API_KEY', what);
        } else {
          t.equal(res.status, 403, what);
          t.equal(res.body?.error?.code, 'INSUFFICIENT_PERMISSIONS', what);
        }
      }
    }
  },
);
