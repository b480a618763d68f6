/**
 * Issue 20's U+0000 findings, replayed on the store the run uses (SQLite, or PostgreSQL with
 * AGENTSHELF_TEST_STORE=postgres): text a store cannot hold (U+0000, a lone surrogate) is
 * refused where it enters, with the same answer on both stores (CONTRACT part 6).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openStoreAt } from '../../src/db/store.js';
import type { AccessRecord } from '../../src/domain/analytics/access-record.js';
import { MAX_RECORDED_AGENT, recordAccess } from '../../src/domain/analytics/interactions.js';
import { startFeedServer } from '../support/feed-server.js';
import { feedProduct, jsonl, syncAndWait } from '../support/integrations.js';
import { productBody, startTestServer } from '../support/server.js';
import { runCli } from '../support/cli.js';
import { freshDatabaseUrl, onPostgres, testStoreEnv } from '../support/store.js';
import { signInDashboard } from '../support/dashboard.js';

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

t.test('an id holding U+0000 (or a lone surrogate) in a path is not found', async (t) => {
  const s = await startTestServer(t);
  const paths: Array<[string, string]> = [
    ['GET', '/v1/products/ID'],
    ['PUT', '/v1/products/ID'],
    ['DELETE', '/v1/products/ID'],
    ['GET', '/v1/feeds/ID'],
    ['PUT', '/v1/feeds/ID'],
    ['DELETE', '/v1/feeds/ID'],
    ['GET', '/v1/feeds/ID/export'],
    ['GET', '/v1/feeds/ID/diagnostics'],
    ['GET', '/v1/integrations/ID'],
    ['PUT', '/v1/integrations/ID'],
    ['DELETE', '/v1/integrations/ID'],
    ['POST', '/v1/integrations/ID/sync'],
    ['POST', '/v1/integrations/ID/test'],
    ['GET', '/v1/integrations/ID/sync/status'],
    ['GET', '/v1/integrations/ID/sync/history'],
    ['GET', '/v1/webhooks/ID'],
    ['PUT', '/v1/webhooks/ID'],
    ['DELETE', '/v1/webhooks/ID'],
    ['GET', '/v1/webhooks/ID/deliveries'],
    ['GET', '/v1/webhooks/ID/deliveries/ID'],
    ['POST', '/v1/webhooks/ID/test'],
    ['GET', '/v1/reports/ID'],
    ['DELETE', '/v1/reports/ID'],
    ['GET', '/v1/reports/ID/download'],
    ['DELETE', '/v1/api-keys/ID'],
  ];
  for (const id of ['a%00b', '%00', 'x%F0%9F%9B%92%00']) {
    for (const [method, template] of paths) {
      const url = template.replaceAll('ID', id);
      const body = method === 'PUT' ? { name: 'x' } : undefined;
      const res = await s.request(method, url, body ? { body } : {});
      t.equal(res.status, 404, `${method} ${url}: ${res.text}`);
      t.equal(res.body?.error?.code, 'not_found', `${method} ${url}`);
    }
  }
  // The inbound platform webhook needs no key: the id alone is refused, before anything.
  const hook = await s.request('POST', '/v1/integrations/a%00b/webhook', {
    key: null,
    raw: '{}',
    headers: { 'content-type': 'application/json', 'x-shopify-hmac-sha256': 'x' },
  });
  t.equal(hook.status, 404, hook.text);
  t.equal(hook.body.error.code, 'not_found');
  const shown = await s.request('GET', '/v1/products/a%00b', {
    headers: { prefer: 'envelope' },
  });
  t.same(shown.body.error.details, { field: 'id', reason: 'not found' });
});

t.test('a query parameter holding U+0000 is 400 naming it', async (t) => {
  const s = await startTestServer(t);
  for (const [url, field] of [
    ['/v1/audit-log?key_id=a%00b', 'key_id'],
    ['/v1/products?category=a%00b', 'category'],
    ['/v1/products?q=%00', 'q'],
  ] as const) {
    const res = await s.request('GET', url, { headers: { prefer: 'envelope' } });
    t.equal(res.status, 400, `${url}: ${res.text}`);
    t.equal(res.body.error.code, 'INVALID_FIELD_VALUE', url);
    t.same(res.body.error.details, { field, reason: 'must not contain NUL characters' }, url);
  }
  // A parameter's name holding it is named, shown escaped.
  const named = await s.request('GET', '/v1/products?a%00b=1', { headers: { prefer: 'envelope' } });
  t.equal(named.status, 400);
  t.equal(named.body.error.details.field, 'a\\u0000b');
});

t.test('analytics events whose product_id or agent holds U+0000 are refused', async (t) => {
  const s = await startTestServer(t);
  const event = { type: 'view', product_id: 'prod_1', occurred_at: '2026-11-20T10:00:00Z' };
  const cases: Array<[unknown, string, string]> = [
    [{ ...event, product_id: 'a\u0000b' }, 'product_id', 'must not contain NUL characters'],
    [{ ...event, agent: 'bot\u0000' }, 'agent', 'must not contain NUL characters'],
    [
      { events: [event, { ...event, agent: 'x\ud800' }] },
      'events[1].agent',
      'must be valid Unicode (it has a lone surrogate)',
    ],
  ];
  for (const [body, field, reason] of cases) {
    const res = await s.request('POST', '/v1/analytics/events', {
      body,
      headers: { prefer: 'envelope' },
    });
    t.equal(res.status, 422, `${field}: ${res.text}`);
    t.equal(res.body.error.code, 'INVALID_FIELD_VALUE');
    t.same(res.body.error.details, { field, reason });
  }
  const stored = await s.server.store.db.selectFrom('interactions').select('id').execute();
  t.equal(stored.length, 0, 'nothing was recorded');
});

t.test('a product attribute key or value holding U+0000 is 422 naming it', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [
      { attributes: { color: 'bl\u0000ue' } },
      'attributes.color',
      'must not contain NUL characters',
    ],
    [
      { attributes: { 'col\u0000or': 'blue' } },
      'attributes.col\\u0000or',
      'name must not contain NUL characters',
    ],
    [
      { attributes: { specs: { inner: { deep: ['ok', 'x\u0000'] } } } },
      'attributes.specs.inner.deep[1]',
      'must not contain NUL characters',
    ],
    [
      { attributes: { specs: { 'k\udc00': 1 } } },
      'attributes.specs.k\\udc00',
      'name must be valid Unicode (it has a lone surrogate)',
    ],
    [{ images: ['https://x.example/\u0000.jpg'] }, 'images[0]', 'must not contain NUL characters'],
  ];
  for (const [override, field, reason] of cases) {
    const created = await s.request('POST', '/v1/products', {
      body: productBody(override),
      headers: { prefer: 'envelope' },
    });
    t.equal(created.status, 422, `${field}: ${created.text}`);
    t.same(created.body.error.details, { field, reason }, field);
  }
  const ok = await s.request('POST', '/v1/products', { body: productBody() });
  t.equal(ok.status, 201);
  for (const [override, field, reason] of cases) {
    const updated = await s.request('PUT', `/v1/products/${ok.body.id}`, {
      body: override,
      headers: { prefer: 'envelope' },
    });
    t.equal(updated.status, 422, `update ${field}: ${updated.text}`);
    t.same(updated.body.error.details, { field, reason }, `update ${field}`);
  }
  const list = await s.request('GET', '/v1/products');
  t.equal(list.body.pagination.total, 1, 'only the valid product was written');
  t.same((await s.request('GET', `/v1/products/${ok.body.id}`)).body, ok.body, 'unchanged');
});

t.test('a feed item holding U+0000 fails alone; the valid rows sync', async (t) => {
  const feeds = await startFeedServer(t);
  const s = await startTestServer(t, PRIVATE);
  feeds.set(
    '/f.jsonl',
    jsonl([
      feedProduct('A1'),
      feedProduct('B\u00002'),
      feedProduct('C3', { color: 'bl\u0000ue' }),
      feedProduct('D4', { title: 'half \ud800 a pair' }),
      feedProduct('E5'),
    ]),
  );
  const created = await s.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: feeds.url('/f.jsonl') } },
  });
  t.equal(created.status, 201, created.text);
  const run = await syncAndWait(s, created.body.id);
  t.match(run, { status: 'succeeded', fetched: 5, created: 2, failed: 3 });
  const history = await s.request('GET', `/v1/integrations/${created.body.id}/sync/history`);
  t.equal(history.status, 200, history.text);
  const errors = history.body.syncs[0].errors;
  t.same(
    [...errors].sort((a: any, b: any) => String(a.external_id).localeCompare(b.external_id)),
    [
      { external_id: 'B\\u00002', field: 'id', reason: 'must not contain NUL characters' },
      { external_id: 'C3', field: 'attributes.color', reason: 'must not contain NUL characters' },
      {
        external_id: 'D4',
        field: 'name',
        reason: 'must be valid Unicode (it has a lone surrogate)',
      },
    ],
    'each failed item with its field and reason',
  );
  const names = (await s.request('GET', '/v1/products?limit=10')).body.products
    .map((p: any) => p.name)
    .sort();
  t.same(names, ['Product A1', 'Product E5']);
});

t.test(
  'store copy of a store holding U+0000 names the table and the row, in one line',
  async (t) => {
    const dir = t.testdir({});
    const env = { DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public') };
    const seeded = runCli(['seed', '--demo'], env);
    t.equal(seeded.status, 0, seeded.stderr);
    const file = path.join(dir, 'agentshelf.sqlite');
    // Written directly, as an older version could have: a NUL in a name, then in JSON text.
    const raw = new Database(file);
    const [first, second] = raw
      .prepare('select id from products order by id limit 2')
      .pluck()
      .all() as string[];
    raw.prepare('update products set name = ? where id = ?').run('bad\u0000name', first);
    let targets = 0;
    const target = async () =>
      onPostgres()
        ? await freshDatabaseUrl()
        : `sqlite:${path.join(dir, `to-${++targets}.sqlite`)}`;

    const copy = runCli(['store', 'copy', '--to', await target()], env);
    t.not(copy.status, 0, 'the copy fails');
    const lines = copy.stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${copy.stderr}`);
    t.match(
      lines[0],
      `agentshelf store copy: table products, row id=${first}: column name must not contain NUL characters; nothing was committed`,
    );
    t.notMatch(copy.stderr, /\n\s+at /, 'no stack trace');

    raw.prepare('update products set name = ? where id = ?').run('fixed', first);
    raw
      .prepare('update products set attributes = ? where id = ?')
      .run('{"brand":"N","col\\u0000or":"x"}', second);
    raw.close();
    const json = runCli(['store', 'copy', '--to', await target()], env);
    t.not(json.status, 0);
    t.equal(json.stderr.trim().split('\n').length, 1, json.stderr);
    t.match(
      json.stderr,
      `table products, row id=${second}: column attributes (at col\\u0000or) name must not contain NUL characters`,
    );

    // Once the text is fixed, the copy goes through.
    const store = openStoreAt({ dialect: 'sqlite', file });
    await store.db
      .updateTable('products')
      .set({ attributes: '{"brand":"N"}' })
      .where('id', '=', second!)
      .execute();
    await store.close();
    const done = runCli(['store', 'copy', '--to', await target()], env);
    t.equal(done.status, 0, done.stderr);
  },
);

t.test('the dashboard refuses U+0000 in a form, a query or a path id alike', async (t) => {
  const s = await startTestServer(t);
  const dash = await signInDashboard(s, s.keys.admin);
  const posted = await dash.post('/dashboard/products', { name: 'a\u0000b', price: '5' });
  t.equal(posted.status, 422);
  t.match(posted.text, /name must not contain NUL characters\. Nothing was changed\./);
  const query = await dash.get('/dashboard/products?q=a%00b');
  t.equal(query.status, 422);
  t.match(query.text, /q must not contain NUL characters/);
  for (const page of ['products', 'feeds', 'webhooks', 'integrations']) {
    const res = await dash.get(`/dashboard/${page}/a%00b`);
    t.equal(res.status, 404, `/dashboard/${page}/a%00b`);
  }
  t.equal((await s.request('GET', '/v1/products')).body.pagination.total, 0, 'nothing written');
});

t.test('an imported log line holding U+0000 fails alone, with its reason', async (t) => {
  const dir = t.testdir({});
  const line = (ray: string, ua: string) =>
    JSON.stringify({
      ClientRequestHost: 'feeds.example.com',
      ClientRequestMethod: 'GET',
      ClientRequestPath: '/v1/index.json',
      ClientRequestUserAgent: ua,
      EdgeResponseBytes: 10,
      EdgeResponseStatus: 200,
      EdgeStartTimestamp: '2026-11-24T10:15:32Z',
      RayID: ray,
    });
  const file = path.join(dir, 'cf.ndjson');
  fs.writeFileSync(
    file,
    [
      line('r1', 'GPTBot/1.1'),
      line('r2', 'Bad\u0000Bot'),
      line('r3', 'x\udc00'),
      line('r4', 'ClaudeBot/1.0'),
    ].join('\n') + '\n',
  );
  const env = { DATA_DIR: dir, ...(await testStoreEnv(dir)) };
  const res = runCli(['analytics', 'import', '--json', file], env);
  t.equal(res.status, 0, res.stderr);
  const summary = JSON.parse(res.stdout);
  t.match(summary, { lines: 4, imported: 2, bad: 2 });
  t.same(summary.bad_lines, [
    { file, line: 2, reason: 'user agent must not contain NUL characters' },
    { file, line: 3, reason: 'user agent must be valid Unicode (it has a lone surrogate)' },
  ]);
});

t.test(
  'a recorded request keeps its count, with U+FFFD for text a store cannot hold',
  async (t) => {
    const s = await startTestServer(t);
    const db = s.server.store.db;
    const at = new Date('2026-11-24T10:00:00Z');
    const base = { at, method: 'GET', status: 200, bytes: 1, dedupeKey: null, source: 'server' };
    // A cut at the recorded length that would split a surrogate pair keeps no half of it.
    const long = `${'a'.repeat(MAX_RECORDED_AGENT - 1)}🛒`;
    const result = await recordAccess(db, [
      { ...base, path: '/v1/index.json\u0000', userAgent: 'GPT\u0000Bot \ud800' },
      { ...base, path: '/v1/index.json', userAgent: long },
    ] as AccessRecord[]);
    t.equal(result.stored, 2);
    const rows = await db
      .selectFrom('interactions')
      .select(['path', 'user_agent'])
      .orderBy('id')
      .execute();
    t.same(rows[0], { path: '/v1/index.json\uFFFD', user_agent: 'GPT\uFFFDBot \uFFFD' });
    t.equal(rows[1]!.user_agent, `${'a'.repeat(MAX_RECORDED_AGENT - 1)}\uFFFD`);
  },
);

t.test('a refusal under an Idempotency-Key is kept and replayed', async (t) => {
  const s = await startTestServer(t);
  const send = () =>
    s.request('POST', '/v1/products', {
      body: productBody({ attributes: { 'col\u0000or': 'x\u0000' } }),
      headers: { 'idempotency-key': 'nul-1' },
    });
  const first = await send();
  t.equal(first.status, 422, first.text);
  t.equal(
    first.body.error.details,
    'attributes.col\\u0000or: name must not contain NUL characters',
  );
  const again = await send();
  t.equal(again.status, 422);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.same(again.body, first.body);
});
