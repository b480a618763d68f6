import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createConfig, lint, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import ts from 'typescript';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import { defineRoute, type RouteDef } from '../../src/http/route.js';
import { ROOT } from '../support/cli.js';
import { startTestServer } from '../support/server.js';

const DOC = path.join(ROOT, 'docs', 'openapi.json');

/** Redocly's recommended rules; the problems of severity error, as readable lines. */
async function lintErrors(problems: Awaited<ReturnType<typeof lint>>): Promise<string[]> {
  return problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
}

t.test('docs/openapi.json passes the redocly linter without errors', async (t) => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lint({ ref: DOC, config });
  t.same(await lintErrors(problems), []);
  t.notOk(
    problems.some((p) => p.ruleId === 'no-unresolved-refs'),
    'every $ref resolves (no local $defs)',
  );
});

t.test('the linter does catch a dangling $ref (the check can fail)', async (t) => {
  const config = await createConfig({ extends: ['recommended'] });
  const doc = JSON.parse(fs.readFileSync(DOC, 'utf8'));
  delete doc.components.schemas.JsonValue;
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: path.join(ROOT, 'broken-openapi.json'),
    config,
  });
  t.ok((await lintErrors(problems)).some((e) => e.startsWith('no-unresolved-refs')));
});

t.test('the document the server serves passes the linter without errors', async (t) => {
  const s = await startTestServer(t);
  const res = await s.request('GET', '/v1/openapi.json', { key: null });
  t.equal(res.status, 200);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: res.text,
    absoluteRef: path.join(ROOT, 'served-openapi.json'),
    config,
  });
  t.same(await lintErrors(problems), []);
});

/** Type-checks `files` (name -> source) in `dir` with the project's strictness. */
function typeErrors(dir: string, files: Record<string, string>): string[] {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const program = ts.createProgram(
    Object.keys(files).map((name) => path.join(dir, name)),
    {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const USAGE = `import type { components, paths } from './api.js';

type Product = components['schemas']['Product'];
type ListQuery = NonNullable<paths['/v1/products']['get']['parameters']['query']>;
type ListAnswer = paths['/v1/products']['get']['responses'][200]['content']['application/json'];
type CreateBody = NonNullable<
  paths['/v1/products']['post']['requestBody']
>['content']['application/json'];
type Created = paths['/v1/products']['post']['responses'][201]['content']['application/json'];
type Webhook = components['schemas']['Webhook'];
type ApiError = components['schemas']['Error'];

const product: Product = {
  id: 'prod_1',
  name: 'Trail shoe',
  description: null,
  price: 79.99,
  currency: 'USD',
  status: 'active',
  category: 'Apparel > Shoes',
  images: [],
  attributes: { brand: 'Acme', sizes: [41, 42, { eu: '43' }], discontinued: null },
  created_at: '2026-11-25T00:00:00.000Z',
  updated_at: '2026-11-25T00:00:00.000Z',
};
const query: ListQuery = { limit: 10, status: 'draft', category: 'Apparel' };
const answer: ListAnswer = {
  products: [product],
  pagination: { limit: 10, offset: 0, total: 1, has_more: false },
};
const body: CreateBody = { name: 'Trail shoe', price: '79.99', attributes: { brand: 'Acme' } };
const created: Created = product;
const events: Webhook['events'] = ['product.created'];
const failure: ApiError = { error: { code: 'not_found', message: 'No such product', details: '' } };
export const used = [query, answer, body, created, events, failure];
`;

t.test('openapi-typescript generates a client whose types check a usage', async (t) => {
  const source = await openapiTS(pathToFileURL(DOC));
  const generated = astToString(source);
  t.match(generated, /JsonValue:/, 'the recursive JSON value is a named type');
  const dir = t.testdir({});
  t.same(typeErrors(dir, { 'api.ts': generated, 'usage.ts': USAGE }), []);

  const wrong = USAGE.replace("status: 'draft'", "status: 'archived'").replace(
    "price: '79.99'",
    'price: true',
  );
  const errors = typeErrors(dir, { 'api.ts': generated, 'usage.ts': wrong });
  t.equal(errors.length, 2, 'a status outside the enum and a boolean price are refused');
  t.match(errors.join('\n'), /"archived"/);
});

/** A one-route list answering `schema`, for the document builder. */
function routesAnswering(schema: z.ZodType): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/example',
      operationId: 'getExample',
      summary: 'An example',
      tag: 'Meta',
      permission: 'public',
      responses: { 200: { description: 'The example', schema } },
      handler: async () => ({ body: {} }),
    }),
  ];
}

t.test('a recursive schema without a component name stops the document', async (t) => {
  const Tree: z.ZodType = z.lazy(() => z.object({ children: z.array(Tree) }));
  t.throws(
    () => buildOpenApiDocument(routesAnswering(z.object({ root: Tree })), 'http://x'),
    /a recursive schema has no id/,
  );
});

t.test('two different schemas under one component name stop the document', async (t) => {
  const a = z.object({ a: z.string() }).meta({ id: 'OpenApiToolsClash' });
  const b = z.object({ b: z.string() }).meta({ id: 'OpenApiToolsClash' });
  const routes = [...routesAnswering(a), ...routesAnswering(b)];
  routes[1] = { ...routes[1]!, path: '/v1/other', operationId: 'getOther' };
  t.throws(
    () => buildOpenApiDocument(routes, 'http://x'),
    /components\/schemas\/OpenApiToolsClash would mean two schemas/,
  );
});
