/**
 * Every text entrance of the platform API, found from the OpenAPI document (built from the
 * route list, so a new route is covered without a line here): each path parameter, each
 * query parameter (and a query parameter's name), each string field of each body at any
 * depth (and the names of objects' free keys) gets arbitrary strings: U+0000, lone
 * surrogates, long strings, any Unicode. Whatever the string, the answer is never a 5xx; text
 * a store cannot hold is refused by name (CONTRACT part 6): 404 for a path id, 400 naming a
 * query parameter, 422 naming a body field. Runs on the store the run uses (SQLite, or
 * PostgreSQL with AGENTSHELF_TEST_STORE=postgres).
 *
 * The seed is fixed, so a run is repeatable; AGENTSHELF_PROPERTY_SEED=<n> tries others.
 */
import http from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { isAcceptableText, showText } from '../../src/text.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

type Json = Record<string, any>;
/** A free key of an object (`additionalProperties`): the arbitrary string is the key itself. */
const KEY = Symbol('key');
type Step = string | number | typeof KEY;

const SEED = Number(process.env.AGENTSHELF_PROPERTY_SEED ?? 20_2611);
/** Random strings per entrance, after the two examples. */
const RUNS = 3;

/** A receiver nobody listens on: webhooks and feed URLs point here (refused at once). */
const NOWHERE = 'http://127.0.0.1:9';

/** Bodies the routes accept as they are, so the arbitrary field is the only thing at fault. */
const BASES: Record<string, Json> = {
  createProduct: productBody(),
  updateProduct: { name: 'Renamed' },
  createWebhook: { url: `${NOWHERE}/hook`, events: ['product.created'] },
  updateWebhook: { url: `${NOWHERE}/hook2` },
  createFeed: { name: 'Feed', format: 'json' },
  updateFeed: { name: 'Feed 2' },
  createApiKey: { level: 'read_only', name: 'k' },
  createReport: { type: 'products', format: 'csv' },
  createIntegration: { platform: 'feed', settings: { url: `${NOWHERE}/f.csv` } },
  updateIntegration: { settings: { url: `${NOWHERE}/g.csv` } },
  recordAnalyticsEvents: {
    type: 'view',
    product_id: 'prod_1',
    occurred_at: '2026-11-20T10:00:00Z',
  },
};

/**
 * Strings worth trying: a NUL at every entrance, one of the others in turn (an entrance
 * after another), then fast-check's own.
 */
const NUL = 'a\u0000b';
const IN_TURN = ['x\ud800', '\udc00y', '\u0000', 'é'.repeat(3000), '\ud83d\uded2 🛒', ''];
let turn = 0;

const strings = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 3000, size: 'large' }),
  fc
    .tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\u0000', '\ud800', '\udfff'))
    .map(([a, b]) => a + b),
);

function resolve(doc: Json, schema: Json): Json {
  let s = schema;
  while (typeof s?.$ref === 'string') {
    s = doc.components.schemas[s.$ref.slice('#/components/schemas/'.length)];
  }
  return s ?? {};
}

/** Every place in a body schema where a string goes (or a free key), as paths. */
function slotsOf(doc: Json, schema: Json, path: Step[], depth: number, out: Step[][]): void {
  if (depth > 6) return;
  const s = resolve(doc, schema);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const option of (s[key] as Json[] | undefined) ?? []) {
      slotsOf(doc, option, path, depth + 1, out);
    }
  }
  const types: unknown[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const structural = s.properties || s.items || s.additionalProperties || s.anyOf || s.oneOf;
  if (path.length > 0 && (types.includes('string') || (types.length === 0 && !structural))) {
    out.push(path);
  }
  if (types.includes('object') || s.properties) {
    for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      slotsOf(doc, prop, [...path, name], depth + 1, out);
    }
    out.push([...path, KEY]);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      slotsOf(doc, s.additionalProperties, [...path, 'k'], depth + 1, out);
    }
  }
  if (types.includes('array') || s.items) {
    if (s.items) slotsOf(doc, s.items, [...path, 0], depth + 1, out);
  }
}

/** The field as the API names it: `attributes.color`, `events[0].agent`, a key escaped. */
function fieldOf(path: Step[], value: string): string {
  let out = '';
  for (const step of path) {
    if (typeof step === 'number') out += `[${step}]`;
    else {
      const name = step === KEY ? showText(value) : step;
      out += out === '' ? name : `.${name}`;
    }
  }
  return out;
}

function bodyWith(base: Json, path: Step[], value: string): Json {
  const body = structuredClone(base);
  let at: any = body;
  for (let i = 0; i < path.length; i++) {
    const step = path[i]!;
    const last = i === path.length - 1;
    if (step === KEY) {
      at[value] = 'v';
      return body;
    }
    if (last) {
      at[step] = value;
      return body;
    }
    const next = path[i + 1];
    const wantArray = typeof next === 'number';
    if (
      at[step] === null ||
      typeof at[step] !== 'object' ||
      Array.isArray(at[step]) !== wantArray
    ) {
      at[step] = wantArray ? [] : {};
    }
    at = at[step];
  }
  return body;
}

/** Percent-encodes any string, a lone surrogate as the three bytes a client would send. */
function encode(value: string): string {
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  pathParams: string[];
  queryParams: string[];
  bodySchema: Json | undefined;
}

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? []) as Json[];
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

/** Ids of real resources, by the path's first segment after /v1 (`products`). */
const existing: Record<string, string> = {};

/**
 * A path with the given parameters and, for the others, the id of a real resource (so the
 * arbitrary text reaches the store), except on DELETE (which would remove it).
 */
function urlOf(op: Operation, params: Record<string, string>, query = ''): string {
  const collection = op.path.split('/')[2] ?? '';
  const path = op.path.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
    const real = name === 'id' && op.method !== 'DELETE' ? existing[collection] : undefined;
    return encode(params[name] ?? real ?? 'x');
  });
  return query ? `${path}?${query}` : path;
}

/**
 * Sends one request. A request line longer than Node's header limit (http.maxHeaderSize, 16 KiB:
 * 'é' 3,000 times is 18,000 bytes percent-encoded) is refused by Node's HTTP parser with 431 and
 * the connection closed, before any of our code runs; a client still writing then sees the
 * connection closed rather than the 431, as the two race. Such a request counts as that 431;
 * any other failure to answer is a failure.
 */
async function send(s: TestServer, op: Operation, url: string, body?: Json) {
  try {
    return await s.request(op.method, url, {
      headers: { prefer: 'envelope' },
      ...(body !== undefined ? { body } : {}),
    });
  } catch (err) {
    if (Buffer.byteLength(url) < http.maxHeaderSize) throw err;
    return { status: 431, text: `closed by Node's parser: ${(err as Error).message}`, body: {} };
  }
}

t.test('arbitrary text at every entrance of every route: no 5xx, refusals by name', async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  const doc = buildOpenApiDocument(allRoutes, s.url) as Json;
  for (const [collection, operationId] of [
    ['products', 'createProduct'],
    ['webhooks', 'createWebhook'],
    ['feeds', 'createFeed'],
    ['integrations', 'createIntegration'],
    ['reports', 'createReport'],
  ] as const) {
    const created = await s.request('POST', `/v1/${collection}`, { body: BASES[operationId] });
    t.equal(created.status, 201, `a real ${collection} resource: ${created.text}`);
    existing[collection] = created.body.id;
  }
  const ops = operationsOf(doc);
  t.ok(ops.length >= 40, `${ops.length} operations`);
  let checks = 0;
  const run = async (label: string, check: (value: string) => Promise<void>) => {
    await fc.assert(
      fc.asyncProperty(strings, async (value) => {
        checks++;
        await check(value);
      }),
      {
        numRuns: 2 + RUNS,
        seed: SEED,
        examples: [[NUL], [IN_TURN[turn++ % IN_TURN.length]!]],
      },
    );
    t.pass(label);
  };
  const expect = (ok: boolean, what: string, res: { status: number; text: string }) => {
    if (!ok) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
  };

  for (const op of ops) {
    const name = `${op.method} ${op.path}`;
    const base = op.bodySchema ? (BASES[op.operationId] ?? {}) : undefined;

    for (const param of op.pathParams) {
      await run(`${name}: path {${param}}`, async (value) => {
        const res = await send(s, op, urlOf(op, { [param]: value }), base);
        expect(res.status < 500, `${name} {${param}}=${JSON.stringify(value)}`, res);
        if (value.includes('\u0000')) {
          expect(res.status === 404, `${name} {${param}} holding NUL is 404`, res);
        }
      });
    }

    for (const param of [...op.queryParams, KEY] as Array<string | typeof KEY>) {
      const label = param === KEY ? 'a query parameter name' : `query ${param}`;
      await run(`${name}: ${label}`, async (value) => {
        const query = param === KEY ? `${encode(value)}=1` : `${encode(param)}=${encode(value)}`;
        const res = await send(s, op, urlOf(op, {}, query), base);
        const what = `${name} ${label} ${JSON.stringify(value)}`;
        expect(res.status < 500, what, res);
        if (value.includes('\u0000') && res.status !== 401 && res.status !== 404) {
          const field = param === KEY ? showText(value) : param;
          expect(
            res.status === 400 && res.body?.error?.details?.field === field,
            `${what}: 400 naming ${field}`,
            res,
          );
        }
      });
    }

    if (op.bodySchema) {
      const slots: Step[][] = [];
      slotsOf(doc, op.bodySchema, [], 0, slots);
      const seen = new Set<string>();
      for (const slot of slots) {
        const id = slot.map((x) => (x === KEY ? '*' : String(x))).join('/');
        if (seen.has(id)) continue;
        seen.add(id);
        await run(`${name}: body ${id}`, async (value) => {
          const body = bodyWith(base!, slot, value);
          const res = await send(s, op, urlOf(op, {}), body);
          const what = `${name} body ${id} ${JSON.stringify(value).slice(0, 80)}`;
          expect(res.status < 500, what, res);
          // A path id that is not found may answer first (404); otherwise the field is named.
          if (!isAcceptableText(value) && res.status !== 404) {
            const field = fieldOf(slot, value);
            expect(
              res.status === 422 && res.body?.error?.details?.field === field,
              `${what}: 422 naming ${field}`,
              res,
            );
          }
        });
      }
    }
  }
  t.comment(`${checks} requests`);
});
