import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { DOCS_BASE_URL } from '../../src/cli/openapi.js';
import { startTestServer } from '../support/server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

t.test('GET /v1/openapi.json is public and describes every route', async (t) => {
  const s = await startTestServer(t);
  const res = await s.request('GET', '/v1/openapi.json', { key: null });
  t.equal(res.status, 200);
  t.equal(res.body.openapi, '3.1.0');
  t.same(res.body.servers, [{ url: s.config.BASE_URL }]);
  for (const route of allRoutes) {
    const op = res.body.paths[route.path.replace(/:([a-z_]+)/g, '{$1}')]?.[route.method];
    t.ok(op, `${route.method} ${route.path} is documented`);
    t.equal(op.operationId, route.operationId);
  }
  const create = res.body.paths['/v1/products'].post;
  const schema = create.requestBody.content['application/json'].schema;
  t.same(schema.required, ['name', 'price']);
  t.equal(schema.additionalProperties, false, 'unknown fields are refused, as documented');
  t.ok(create.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key'));
  const list = res.body.paths['/v1/products'].get.parameters;
  t.match(list.find((p: { name: string }) => p.name === 'limit').schema, {
    maximum: 250,
    minimum: 1,
    default: 50,
  });
});

t.test(
  'docs/openapi.json is the generated document (run `make openapi` after changing routes)',
  async (t) => {
    const checkedIn = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8'));
    t.same(checkedIn, buildOpenApiDocument(allRoutes, DOCS_BASE_URL));
  },
);
