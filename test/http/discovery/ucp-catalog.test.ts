import { pino } from 'pino';
import t, { type Test } from 'tap';
import { publishDiscovery } from '../../../pipeline/discovery/index.js';
import { startDiscoveryServer } from '../../../src/http/discovery/server.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { createClock, createPipelineContext, startTestStore } from '../../support/pipeline.js';
import { loadUcpValidators, schemaErrors } from '../../support/ucp.js';

const ucp = loadUcpValidators();

/** The demo catalogue, published, behind a discovery server on a free port. */
async function startCatalog(t: Test, env: Record<string, string> = {}) {
  const s = await startTestStore(t, env);
  await seedDemo(s.db, { currency: 'USD' }, { analytics: false });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const clock = createClock();
  const server = await startDiscoveryServer({
    config: s.config,
    db: s.db,
    logger: pino({ level: 'silent' }),
    port: 0,
    now: clock.now,
    recordRequests: false,
  });
  t.teardown(() => server.close());
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  return { ...s, server, clock, post };
}

t.test('GET /.well-known/ucp is the business profile, cacheable and valid', async (t) => {
  const c = await startCatalog(t);
  const res = await fetch(`${c.server.url}/.well-known/ucp`, { redirect: 'manual' });
  t.equal(res.status, 200, 'served where it is, never redirected');
  t.match(res.headers.get('content-type'), /^application\/json/);
  const cache = res.headers.get('cache-control') ?? '';
  t.match(cache, /\bpublic\b/);
  t.ok(Number(/max-age=(\d+)/.exec(cache)?.[1]) >= 60, 'max-age of 60 s at least');
  t.notMatch(cache, /private|no-store|no-cache/);
  const etag = res.headers.get('etag');
  t.ok(etag, 'an ETag');
  const profile = (await res.json()) as any;
  t.ok(ucp.businessUcp(profile.ucp), schemaErrors(ucp.businessUcp));
  const services = profile.ucp.services['dev.ucp.shopping'];
  t.same(
    services.map((s: any) => [s.transport, s.endpoint]),
    [
      ['rest', 'https://feeds.example.com/ucp'],
      ['mcp', 'https://feeds.example.com/ucp/mcp'],
    ],
  );
  t.same(Object.keys(profile.ucp.capabilities).sort(), [
    'dev.ucp.shopping.catalog.lookup',
    'dev.ucp.shopping.catalog.search',
  ]);
  t.same(profile.ucp.payment_handlers, {});
  const again = await fetch(`${c.server.url}/.well-known/ucp`, {
    headers: { 'if-none-match': etag! },
  });
  t.equal(again.status, 304);
});

t.test('a search finds the product a shopper means, shaped by the schema', async (t) => {
  const c = await startCatalog(t);
  const res = await c.post('/ucp/catalog/search', { query: 'waterproof rain jacket' });
  t.equal(res.status, 200);
  t.ok(ucp.searchResponse(res.body), schemaErrors(ucp.searchResponse));
  t.equal(res.body.ucp.version, '2026-04-08');
  const [first] = res.body.products;
  t.equal(first.id, 'NW-RAIN', 'the variant group is the product');
  t.equal(first.title, 'Stormline Rain Jacket', 'the title the variants share');
  t.same(first.price_range, {
    min: { amount: 17999, currency: 'USD' },
    max: { amount: 17999, currency: 'USD' },
  });
  t.same(first.categories, [{ value: 'Apparel > Outerwear > Jackets', taxonomy: 'merchant' }]);
  t.equal(first.variants.length, 4, 'every active variant');
  t.match(first.variants[0], {
    id: 'NW-RAIN-MOSS-L',
    price: { amount: 17999, currency: 'USD' },
    availability: { available: true, status: 'in_stock' },
    options: [
      { name: 'Color', label: 'Moss' },
      { name: 'Size', label: 'L' },
    ],
  });
  t.same(
    first.options.map((o: any) => [o.name, o.values.map((v: any) => v.label)]),
    [
      ['Color', ['Moss', 'Navy']],
      ['Size', ['L', 'M']],
    ],
  );
  t.ok(first.media.length > 0 && first.url.startsWith('https://northwind.example/'));
  const none = await c.post('/ucp/catalog/search', { query: 'submarine' });
  t.same(none.body.products, [], 'nothing found is an empty list, not an error');
  t.same(none.body.pagination, { has_next_page: false });
});

t.test('cursor pagination walks every result once; a changed cursor is 400', async (t) => {
  const c = await startCatalog(t);
  const request = { filters: { categories: ['Apparel'] }, pagination: { limit: 2 } };
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await c.post('/ucp/catalog/search', {
      ...request,
      pagination: { ...request.pagination, ...(cursor ? { cursor } : {}) },
    });
    t.ok(ucp.searchResponse(res.body), schemaErrors(ucp.searchResponse));
    t.ok(res.body.products.length <= 2);
    seen.push(...res.body.products.map((p: any) => p.id));
    if (!res.body.pagination.has_next_page) break;
    cursor = res.body.pagination.cursor;
  }
  t.same(
    [...seen].sort(),
    ['NW-CAP', 'NW-CITY', 'NW-FLEECE', 'NW-RAIN', 'NW-SHORT', 'NW-SOCK', 'NW-TEE', 'NW-TRAIL'],
    'each Apparel product once, and only those',
  );
  const first = await c.post('/ucp/catalog/search', request);
  const good = first.body.pagination.cursor as string;
  const [offset, mac] = good.split('.') as [string, string];
  const flipped = `${offset}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
  const padding = `${offset}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
  for (const bad of [flipped, padding, `9.${mac}`, 'eyJwYWdlIjoxfQ==', '']) {
    const res = await c.post('/ucp/catalog/search', {
      ...request,
      pagination: { limit: 2, cursor: bad },
    });
    t.equal(res.status, 400, `cursor ${JSON.stringify(bad)}`);
    t.ok(ucp.errorResponse(res.body), schemaErrors(ucp.errorResponse));
    t.match(res.body.messages[0].content, /^pagination\.cursor: /);
  }
  const other = await c.post('/ucp/catalog/search', {
    query: 'shoe',
    pagination: { limit: 2, cursor: good },
  });
  t.equal(other.status, 400, "another search's cursor");
});

t.test('search syntax and long queries are searched as text', async (t) => {
  const c = await startCatalog(t);
  for (const query of [
    '"',
    '*',
    'NEAR(rain jacket)',
    '-jacket',
    'jacket OR 1=1; drop table products --',
    'rain:* & !jacket | (',
    `${'jacket '.repeat(1400)}x`.slice(0, 10_000),
    'ü'.repeat(10_000),
  ]) {
    const res = await c.post('/ucp/catalog/search', { query });
    t.equal(res.status, 200, `query ${JSON.stringify(query.slice(0, 30))}`);
    t.ok(ucp.searchResponse(res.body), schemaErrors(ucp.searchResponse));
  }
  const quoted = await c.post('/ucp/catalog/search', { query: '"rain" NEAR jacket*' });
  t.equal(quoted.body.products[0]?.id, 'NW-RAIN', 'the words still count');
});

t.test('requests the schemas refuse get UCP errors naming the field', async (t) => {
  const c = await startCatalog(t);
  const cases: [string, unknown, RegExp][] = [
    ['/ucp/catalog/search', '{"query": ', /not valid JSON/],
    ['/ucp/catalog/search', [], /JSON object/],
    ['/ucp/catalog/search', {}, /^query: /],
    ['/ucp/catalog/search', { query: 5 }, /^query: /],
    ['/ucp/catalog/search', { query: 'a\u0000b' }, /^query: must not contain NUL/],
    ['/ucp/catalog/search', { query: 'x', pagination: { limit: 0 } }, /^pagination\.limit: /],
    [
      '/ucp/catalog/search',
      { query: 'x', filters: { price: { max: 1.5 } } },
      /^filters\.price\.max: /,
    ],
    ['/ucp/catalog/lookup', { ids: [] }, /^ids: /],
    ['/ucp/catalog/lookup', { ids: ['a', 7] }, /^ids\[1\]: /],
    ['/ucp/catalog/product', {}, /^id: /],
  ];
  for (const [path, body, message] of cases) {
    const res = await c.post(path, body);
    t.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
    t.ok(ucp.errorResponse(res.body), schemaErrors(ucp.errorResponse));
    t.match(res.body.messages[0].content, message);
  }
  const many = await c.post('/ucp/catalog/lookup', {
    ids: Array.from({ length: 51 }, (_, i) => `id${i}`),
  });
  t.equal(many.status, 400);
  t.equal(many.body.messages[0].code, 'request_too_large');
  const get = await fetch(`${c.server.url}/ucp/catalog/search`);
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST, OPTIONS');
});

t.test('lookup resolves product and variant ids, with their inputs', async (t) => {
  const c = await startCatalog(t);
  const res = await c.post('/ucp/catalog/lookup', {
    ids: ['NW-RAIN', 'NW-CITY-BLACK-10', 'NW-CITY-WHITE-9', 'TW-DECAF', 'nope', 'NW-RAIN'],
  });
  t.equal(res.status, 200);
  t.ok(ucp.lookupResponse(res.body), schemaErrors(ucp.lookupResponse));
  const byId = new Map<string, any>(res.body.products.map((p: any) => [p.id, p]));
  t.same([...byId.keys()].sort(), ['NW-CITY', 'NW-RAIN', 'TW-DECAF']);
  t.same(
    byId.get('NW-RAIN').variants.map((v: any) => [v.id, v.inputs]),
    [['NW-RAIN-MOSS-L', [{ id: 'NW-RAIN', match: 'featured' }]]],
    'a group id: its featured variant',
  );
  t.same(
    byId
      .get('NW-CITY')
      .variants.map((v: any) => [v.id, v.inputs])
      .sort(),
    [
      ['NW-CITY-BLACK-10', [{ id: 'NW-CITY-BLACK-10', match: 'exact' }]],
      ['NW-CITY-WHITE-9', [{ id: 'NW-CITY-WHITE-9', match: 'exact' }]],
    ],
    'variant ids: those variants, exactly',
  );
  t.same(byId.get('TW-DECAF').variants[0].inputs, [{ id: 'TW-DECAF', match: 'exact' }]);
  t.same(res.body.messages, [{ type: 'info', code: 'not_found', content: 'nope' }]);
});

t.test('get_product narrows by selected options and signals availability', async (t) => {
  const c = await startCatalog(t);
  const res = await c.post('/ucp/catalog/product', {
    id: 'NW-CITY',
    selected: [{ name: 'Color', label: 'Black' }],
  });
  t.equal(res.status, 200);
  t.ok(ucp.productResponse(res.body), schemaErrors(ucp.productResponse));
  const p = res.body.product;
  t.same(p.selected, [{ name: 'Color', label: 'Black' }]);
  t.same(
    p.variants.map((v: any) => v.id),
    ['NW-CITY-BLACK-10'],
  );
  const size = p.options.find((o: any) => o.name === 'Size');
  t.same(
    size.values,
    [
      { label: '10', available: false, exists: true },
      { label: '9', available: false, exists: false },
    ],
    'black comes in 10 only, and it is out of stock',
  );
  const relaxed = await c.post('/ucp/catalog/product', {
    id: 'NW-CITY',
    selected: [
      { name: 'Color', label: 'Black' },
      { name: 'Size', label: '9' },
    ],
    preferences: ['Color', 'Size'],
  });
  t.same(relaxed.body.product.selected, [{ name: 'Color', label: 'Black' }], 'Size relaxed first');
  const variant = await c.post('/ucp/catalog/product', { id: 'NW-CITY-WHITE-10' });
  t.equal(variant.body.product.variants[0].id, 'NW-CITY-WHITE-10', 'the variant asked for first');
  t.same(variant.body.product.selected, [
    { name: 'Color', label: 'White' },
    { name: 'Size', label: '10' },
  ]);
  const missing = await c.post('/ucp/catalog/product', { id: 'nope' });
  t.equal(missing.status, 200, 'a business outcome, not a transport error');
  t.ok(ucp.errorResponse(missing.body), schemaErrors(ucp.errorResponse));
  t.match(missing.body.messages[0], { code: 'not_found', severity: 'unrecoverable' });
});

t.test('the price filter keeps variants within it, in the context currency', async (t) => {
  const c = await startCatalog(t);
  const res = await c.post('/ucp/catalog/search', {
    filters: { price: { min: 2000, max: 9000 } },
    context: { currency: 'USD' },
    pagination: { limit: 50 },
  });
  t.ok(ucp.searchResponse(res.body), schemaErrors(ucp.searchResponse));
  t.ok(res.body.products.length > 0);
  for (const p of res.body.products) {
    for (const v of p.variants) {
      t.equal(v.price.currency, 'USD');
      t.ok(v.price.amount >= 2000 && v.price.amount <= 9000, `${v.id} ${v.price.amount}`);
    }
  }
  const eur = await c.post('/ucp/catalog/search', {
    query: 'lamp',
    filters: { price: { max: 100_000 } },
    context: { currency: 'EUR' },
  });
  t.ok(eur.body.products.length > 0);
  t.ok(eur.body.products.every((p: any) => p.price_range.min.currency === 'EUR'));
});

t.test('the catalog counts against the per-address limits', async (t) => {
  const c = await startCatalog(t, {
    DISCOVERY_LIMIT_PER_MINUTE: '2',
    DISCOVERY_LIMIT_PER_HOUR: '0',
    DISCOVERY_LIMIT_PER_DAY: '0',
  });
  const first = await c.post('/ucp/catalog/search', { query: 'lamp' });
  t.equal(first.headers.get('x-ratelimit-remaining'), '1');
  await c.post('/ucp/catalog/lookup', { ids: ['LU-ARC'] });
  const refused = await c.post('/ucp/catalog/search', { query: 'lamp' });
  t.equal(refused.status, 429);
  t.ok(Number(refused.headers.get('retry-after')) > 0);
  t.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  c.clock.advance(60);
  t.equal((await c.post('/ucp/catalog/search', { query: 'lamp' })).status, 200);
});
