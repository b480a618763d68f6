import fs from 'node:fs';
import zlib from 'node:zlib';
import t from 'tap';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { createFeed, feedPath, runFeeds } from '../support/feeds.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

async function feedEvents(s: TestServer) {
  const rows = await s.server.store.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'like', 'feed.%')
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}

async function addProducts(s: TestServer, n: number, overrides: Record<string, unknown> = {}) {
  for (let i = 0; i < n; i++) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id: `P-${i}`, name: `Product ${i}`, ...overrides }),
    });
    if (res.status !== 201) throw new Error(res.text);
  }
}

t.test('a feed is created in processing, then a run publishes it as active', async (t) => {
  const s = await startTestServer(t);
  await addProducts(s, 3);
  const created = await s.request('POST', '/v1/feeds', {
    body: { name: 'Everything', format: 'json' },
  });
  t.equal(created.status, 201);
  t.match(created.body.id, /^feed_[A-Za-z0-9]{16}$/);
  t.equal(created.headers.get('location'), `/v1/feeds/${created.body.id}`);
  t.match(created.body, {
    name: 'Everything',
    format: 'json',
    status: 'processing',
    url: `${s.config.BASE_URL}/v1/feeds/${created.body.id}/export`,
    last_updated: null,
    product_count: 0,
    products: null,
    filters: {},
    last_error: null,
    diagnostics: null,
  });
  t.ok(Date.parse(created.body.estimated_completion) > Date.parse(created.body.created_at));

  const result = await runFeeds(s);
  t.equal(result.status, 'succeeded');
  const got = await s.request('GET', `/v1/feeds/${created.body.id}`);
  t.match(got.body, {
    status: 'active',
    product_count: 3,
    estimated_completion: null,
    diagnostics: { products: 3, products_with_errors: 3 },
  });
  t.match(got.body.last_updated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const list = await s.request('GET', '/v1/feeds');
  t.same(Object.keys(list.body.feeds[0]).sort(), [
    'compression',
    'format',
    'id',
    'last_updated',
    'name',
    'product_count',
    'profile',
    'status',
    'url',
  ]);
  t.same(list.body.pagination, { limit: 50, offset: 0, total: 1, has_more: false });
});

t.test('bad feed definitions are refused with 422 naming the field', async (t) => {
  const s = await startTestServer(t);
  await addProducts(s, 2);
  const cases: [Record<string, unknown>, number, string, string][] = [
    [{ format: 'json' }, 422, 'missing_parameter', 'name: is required'],
    [{ name: 'x' }, 422, 'missing_parameter', 'format: is required'],
    [
      { name: 'x', format: 'yaml' },
      422,
      'invalid_parameter',
      'format: must be one of json, jsonl, csv, tsv, xml',
    ],
    // A format of another profile: the agentshelf profile (the default) takes today's three.
    [
      { name: 'x', format: 'tsv' },
      422,
      'invalid_parameter',
      'format: agentshelf takes json, csv, xml',
    ],
    [
      { name: 'x', format: 'csv', colour: 1 },
      422,
      'invalid_parameter',
      'colour: is not a known field',
    ],
    [
      { name: 'x', format: 'csv', products: ['P-0', 'nope'] },
      422,
      'invalid_parameter',
      "products[1]: no product with id 'nope'",
    ],
    [
      { name: 'x', format: 'csv', products: [] },
      422,
      'invalid_parameter',
      'products: must have at least 1 items',
    ],
    [
      { name: 'x', format: 'csv', filters: { status: 'gone' } },
      422,
      'invalid_parameter',
      'filters.status: must be one of active, inactive, draft',
    ],
    [
      { name: 'x', format: 'csv', filters: { brand: 'a' } },
      422,
      'invalid_parameter',
      'filters.brand: is not a known field',
    ],
    [{ name: ' ', format: 'csv' }, 422, 'invalid_parameter', 'name: must not be empty'],
  ];
  for (const [body, status, code, details] of cases) {
    const res = await s.request('POST', '/v1/feeds', { body });
    t.equal(res.status, status, JSON.stringify(body));
    t.equal(res.body.error.code, code, JSON.stringify(body));
    t.equal(res.body.error.details, details, JSON.stringify(body));
  }
  t.equal((await s.request('GET', '/v1/feeds')).body.feeds.length, 0, 'nothing was created');
  const ro = await s.request('POST', '/v1/feeds', {
    key: s.keys.read_only,
    body: { name: 'x', format: 'json' },
  });
  t.equal(ro.status, 403);
});

t.test('the list filters by format and status, and refuses unknown values', async (t) => {
  const s = await startTestServer(t);
  const a = await createFeed(s, { name: 'A', format: 'json' });
  const b = await createFeed(s, { name: 'B', format: 'csv' });
  const c = await createFeed(s, { name: 'C', format: 'csv' });
  await s.request('PUT', `/v1/feeds/${c.id}`, { body: { status: 'inactive' } });
  const ids = async (query: string) =>
    (await s.request('GET', `/v1/feeds${query}`)).body.feeds.map((f: { id: string }) => f.id);
  t.same(await ids(''), [a.id, b.id, c.id]);
  t.same(await ids('?format=csv'), [b.id, c.id]);
  t.same(await ids('?status=processing'), [a.id, b.id]);
  t.same(await ids('?format=csv&status=inactive'), [c.id]);
  t.same(await ids('?format=xml'), []);
  t.same(await ids('?limit=1&offset=1'), [b.id]);
  const bad = await s.request('GET', '/v1/feeds?status=paused');
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'invalid_parameter');
  t.equal(bad.body.error.details, 'status: must be one of active, inactive, processing');
  t.equal((await s.request('GET', '/v1/feeds?format=pdf')).status, 400);
  t.equal((await s.request('GET', '/v1/feeds/feed_nope')).status, 404);
});

t.test(
  'estimated_completion is the debounce delay plus the products at the measured rate',
  async (t) => {
    let clock = new Date('2026-11-21T10:00:00.000Z');
    const s = await startTestServer(t, { FEEDS_DEBOUNCE_MS: '2000' }, { now: () => clock });
    await seedSynthetic(s.server.store.db, { count: 12_000, brands: 10 });
    const first = await createFeed(s, { name: 'All', format: 'csv' });
    const active = 11_760; // every 50th synthetic product is a draft
    const assumed =
      Date.parse(clock.toISOString()) + 2000 + 500 + Math.ceil((active / 40_000) * 1000);
    t.equal(first.estimated_completion, new Date(assumed).toISOString(), 'before any measurement');

    await runFeeds(s);
    const row = await s.server.store.db
      .selectFrom('feeds')
      .select(['product_count', 'last_run_ms'])
      .where('id', '=', first.id)
      .executeTakeFirstOrThrow();
    t.equal(row.product_count, active);
    clock = new Date('2026-11-21T11:00:00.000Z');
    const second = await createFeed(s, {
      name: 'Running shoes',
      format: 'xml',
      filters: { category: 'Apparel > Shoes' },
    });
    // Synthetic product i is a running shoe when i % 6 is 0, and a draft when i % 50 is 49.
    let shoes = 0;
    for (let i = 0; i < 12_000; i++) if (i % 6 === 0 && i % 50 !== 49) shoes++;
    const rate = (row.product_count / row.last_run_ms!) * 1000;
    const expected =
      Date.parse(clock.toISOString()) + Math.ceil(2000 + 500 + (shoes / rate) * 1000);
    t.equal(second.estimated_completion, new Date(expected).toISOString(), 'at the measured rate');
  },
);

t.test(
  'export: 409 with Retry-After before generation, then the file with its headers',
  async (t) => {
    let clock = new Date('2026-11-21T10:00:00.000Z');
    const s = await startTestServer(t, {}, { now: () => clock });
    await addProducts(s, 2);
    const feed = await createFeed(s, { name: 'Summer Shoes: "Best" / 2026', format: 'csv' });
    const early = await s.request('GET', `/v1/feeds/${feed.id}/export`);
    t.equal(early.status, 409);
    t.equal(early.body.error.code, 'conflict');
    const wait = Math.ceil((Date.parse(feed.estimated_completion) - clock.getTime()) / 1000);
    t.equal(early.headers.get('retry-after'), String(wait));
    clock = new Date(clock.getTime() + 60_000);
    const late = await s.request('GET', `/v1/feeds/${feed.id}/export`);
    t.equal(late.headers.get('retry-after'), '5', 'a passed estimate asks again in 5 s');

    await runFeeds(s);
    const identity = { 'accept-encoding': 'identity' };
    const res = await s.request('GET', `/v1/feeds/${feed.id}/export`, { headers: identity });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
    t.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="Summer Shoes_ _Best_ _ 2026.csv"; filename*=UTF-8''Summer%20Shoes%3A%20%22Best%22%20%2F%202026.csv`,
    );
    t.equal(res.headers.get('cache-control'), 'private, no-cache');
    t.equal(res.text, fs.readFileSync(feedPath(s, feed.id, 'csv'), 'utf8'));
    t.equal(res.headers.get('content-length'), String(Buffer.byteLength(res.text)));
    const etag = res.headers.get('etag')!;
    t.match(etag, /^"[0-9a-z-]+"$/);

    const again = await s.request('GET', `/v1/feeds/${feed.id}/export`, {
      headers: { ...identity, 'if-none-match': `"other", ${etag}` },
    });
    t.equal(again.status, 304);
    t.equal(again.text, '');
    t.equal(again.headers.get('etag'), etag);
    const since = await s.request('GET', `/v1/feeds/${feed.id}/export`, {
      headers: { ...identity, 'if-modified-since': res.headers.get('last-modified')! },
    });
    t.equal(since.status, 304, 'If-Modified-Since too');

    const gz = await fetch(`${s.url}/v1/feeds/${feed.id}/export`, {
      headers: { authorization: `Bearer ${s.keys.read_only}`, 'accept-encoding': 'gzip' },
    });
    t.equal(gz.headers.get('content-encoding'), 'gzip');
    t.equal(gz.headers.get('vary'), 'Accept-Encoding');
    t.not(gz.headers.get('etag'), etag, 'the gzip body has its own ETag');
    t.equal(await gz.text(), res.text, 'the gzip body decodes to the same file');
    const raw = await rawGet(s, `/v1/feeds/${feed.id}/export`, 'gzip;q=0, identity');
    t.equal(raw.headers['content-encoding'], undefined, 'q=0 refuses gzip');
    t.equal(raw.body.toString(), res.text);
    const zipped = await rawGet(s, `/v1/feeds/${feed.id}/export`, 'br, gzip');
    t.equal(zlib.gunzipSync(zipped.body).toString(), res.text);

    const head = await s.request('HEAD', `/v1/feeds/${feed.id}/export`, { headers: identity });
    t.equal(head.status, 200);
    t.equal(head.text, '');
    t.equal(head.headers.get('content-length'), res.headers.get('content-length'));
    const enveloped = await s.request('GET', `/v1/feeds/${feed.id}/export`, {
      headers: { ...identity, prefer: 'envelope' },
    });
    t.equal(enveloped.text, res.text, 'the file is never wrapped in an envelope');
  },
);

async function rawGet(s: TestServer, path: string, acceptEncoding: string) {
  const http = await import('node:http');
  return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    const req = http.get(
      `${s.url}${path}`,
      { headers: { authorization: `Bearer ${s.keys.admin}`, 'accept-encoding': acceptEncoding } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
  });
}

t.test(
  'every state transition records its event with the feed as the API returns it',
  async (t) => {
    const s = await startTestServer(t);
    await addProducts(s, 2);
    const feed = await createFeed(s, { name: 'F', format: 'xml' });
    t.same(await feedEvents(s), [], 'creation records nothing until generation');

    await runFeeds(s);
    let events = await feedEvents(s);
    t.same(
      events.map((e) => e.type),
      ['feed.generated', 'feed.published'],
      'processing -> active: generated the first time, and published',
    );
    const active = (await s.request('GET', `/v1/feeds/${feed.id}`)).body;
    t.same(events[1]!.data, active, 'data is the feed as GET returns it');
    const etag = (await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag');

    await runFeeds(s);
    t.equal((await feedEvents(s)).length, 2, 'an unchanged run records nothing');
    t.equal((await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag'), etag);

    const renamed = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { name: 'G' } });
    t.equal(renamed.body.status, 'processing', 'a new definition regenerates');
    t.ok(renamed.body.estimated_completion);
    events = await feedEvents(s);
    t.equal(events[2]!.type, 'feed.updated');
    t.same(events[2]!.data, renamed.body);
    t.equal(
      (await s.request('GET', `/v1/feeds/${feed.id}/export`)).status,
      200,
      'the previous file is served until the new one is published',
    );
    await runFeeds(s);
    events = await feedEvents(s);
    t.same(
      events.slice(3).map((e) => e.type),
      ['feed.published'],
      'no second feed.generated',
    );
    t.equal(events[3]!.data.status, 'active');
    t.not((await s.request('GET', `/v1/feeds/${feed.id}/export`)).headers.get('etag'), etag);

    const same = await s.request('PUT', `/v1/feeds/${feed.id}`, {
      body: { name: 'G', status: 'active', filters: null },
    });
    t.equal(same.body.status, 'active');
    t.equal((await feedEvents(s)).length, 4, 'a PUT that changes nothing records nothing');

    await s.request('PUT', '/v1/products/P-0', { body: { price: 5 } });
    await runFeeds(s);
    events = await feedEvents(s);
    t.same(
      events.slice(4).map((e) => e.type),
      ['feed.published'],
      'a product change republishes',
    );

    const off = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { status: 'inactive' } });
    t.equal(off.body.status, 'inactive');
    t.equal((await feedEvents(s))[5]!.type, 'feed.updated');
    const gone = await s.request('GET', `/v1/feeds/${feed.id}/export`);
    t.equal(gone.status, 404, 'an inactive feed is not exported');
    t.match(gone.body.error.message, /inactive/);
    await runFeeds(s);
    t.notOk(fs.existsSync(feedPath(s, feed.id, 'xml')), "the run removes an inactive feed's file");
    t.notOk(fs.existsSync(`${feedPath(s, feed.id, 'xml')}.gz`));
    t.equal((await feedEvents(s)).length, 6, 'an inactive feed is not generated');

    const on = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { status: 'active' } });
    t.equal(on.body.status, 'processing', 'inactive -> active regenerates');
    t.equal((await feedEvents(s))[6]!.type, 'feed.updated');
    t.equal((await s.request('GET', `/v1/feeds/${feed.id}/export`)).status, 409);
    await runFeeds(s);
    events = await feedEvents(s);
    t.same(
      events.slice(7).map((e) => e.type),
      ['feed.published'],
    );
    t.equal((await s.request('GET', `/v1/feeds/${feed.id}`)).body.status, 'active');

    const csv = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { format: 'csv' } });
    t.equal(csv.body.format, 'csv');
    await runFeeds(s);
    t.ok(fs.existsSync(feedPath(s, feed.id, 'csv')));
    t.notOk(fs.existsSync(feedPath(s, feed.id, 'xml')), 'the old format is removed');
    const exported = await s.request('GET', `/v1/feeds/${feed.id}/export`);
    t.equal(exported.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');

    t.equal((await s.request('DELETE', `/v1/feeds/${feed.id}`)).status, 204);
    t.equal((await s.request('GET', `/v1/feeds/${feed.id}/export`)).status, 404);
    t.equal((await s.request('DELETE', `/v1/feeds/${feed.id}`)).status, 404);
    await runFeeds(s);
    t.notOk(fs.existsSync(feedPath(s, feed.id, 'csv')), "a deleted feed's files are removed");
    t.same(
      fs.readdirSync(`${s.config.DATA_DIR}/feeds`),
      [],
      'nothing is left behind, diagnostics included',
    );
  },
);

t.test(
  'a failed generation sets the feed inactive with last_error and records feed.updated',
  async (t) => {
    const s = await startTestServer(t);
    await addProducts(s, 2);
    const ok = await createFeed(s, { name: 'Fine', format: 'json' });
    const broken = await createFeed(s, { name: 'Broken', format: 'json' });
    // A directory where the file should go: the rename into place fails.
    fs.mkdirSync(`${feedPath(s, broken.id, 'json')}/blocked`, { recursive: true });
    const result = await runFeeds(s);
    t.equal(result.status, 'failed');
    t.same(result.failures, [`${broken.id} ("Broken")`]);
    const got = (await s.request('GET', `/v1/feeds/${broken.id}`)).body;
    t.equal(got.status, 'inactive');
    t.match(got.last_error, { message: /EISDIR|ENOTEMPTY|directory/i });
    t.match(got.last_error.occurred_at, /Z$/);
    const events = await feedEvents(s);
    const mine = events.filter((e) => e.data.id === broken.id);
    t.same(
      mine.map((e) => e.type),
      ['feed.updated'],
    );
    t.equal(mine[0]!.data.status, 'inactive');
    t.equal(
      (await s.request('GET', `/v1/feeds/${ok.id}`)).body.status,
      'active',
      'other feeds go on',
    );
    const leftovers = fs
      .readdirSync(`${s.config.DATA_DIR}/feeds`)
      .filter((n) => n.includes('.tmp-'));
    t.same(leftovers, [], 'no temporary file is left');

    fs.rmSync(feedPath(s, broken.id, 'json'), { recursive: true });
    await s.request('PUT', `/v1/feeds/${broken.id}`, { body: { status: 'active' } });
    await runFeeds(s);
    const fixed = (await s.request('GET', `/v1/feeds/${broken.id}`)).body;
    t.equal(fixed.status, 'active');
    t.equal(fixed.last_error, null, 'a successful generation clears last_error');
  },
);

t.test('a feed lists its products, PUT replaces the list, and null removes it', async (t) => {
  const s = await startTestServer(t);
  await addProducts(s, 3);
  const feed = await createFeed(s, {
    name: 'Two',
    format: 'json',
    products: ['P-2', 'P-0', 'P-2'],
  });
  t.same(feed.products, ['P-0', 'P-2'], 'duplicates are ignored');
  const same = await s.request('PUT', `/v1/feeds/${feed.id}`, {
    body: { products: ['P-2', 'P-0'] },
  });
  t.equal(same.body.updated_at, feed.updated_at, 'the same list in another order changes nothing');
  const one = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { products: ['P-1'] } });
  t.same(one.body.products, ['P-1']);
  const all = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { products: null } });
  t.equal(all.body.products, null);
  const bad = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { status: 'processing' } });
  t.equal(bad.status, 422);
  t.equal(bad.body.error.details, 'status: must be one of active, inactive');
});
