import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { publishDiscovery } from '../../../pipeline/discovery/index.js';
import { addProduct, rawRequest, repoRoot } from '../../support/discovery.js';
import { createClock, createPipelineContext } from '../../support/pipeline.js';
import { startTestServer, type TestServer } from '../../support/server.js';

const run = promisify(execFile);

async function publishedServer(
  t: Test,
  env: Record<string, string> = {},
  now?: () => Date,
  discoveryFlushMs?: number,
) {
  const s = await startTestServer(
    t,
    { FEEDS_URL: 'https://feeds.example.com', ...env },
    { ...(now ? { now } : {}), ...(discoveryFlushMs ? { discoveryFlushMs } : {}) },
  );
  await addProduct(s.server.store.db, {
    id: 'lamp',
    name: 'Desk Lamp',
    description: 'A lamp. '.repeat(200),
    attributes: { brand: 'Lumen & Co' },
  });
  await addProduct(s.server.store.db, {
    id: 'shoe',
    name: 'Shoe',
    attributes: { brand: 'Northwind' },
  });
  const ctx = createPipelineContext(t, s.server.store, s.config);
  await publishDiscovery(ctx);
  s.server.discovery.revalidate();
  return { s, ctx, feeds: s.server.discovery.url };
}

function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(url, { headers, method });
}

t.test('files are served with the headers of CONTRACT part 4', async (t) => {
  const { feeds } = await publishedServer(t);
  const cases: [string, string, string][] = [
    [
      '/v1/index.json',
      'application/json; charset=utf-8',
      'public, max-age=60, stale-while-revalidate=600',
    ],
    [
      '/v1/brands/lumen-and-co.json',
      'application/json; charset=utf-8',
      'public, max-age=300, stale-while-revalidate=3600',
    ],
    [
      '/v1/feeds/lumen-and-co/products.json',
      'application/json; charset=utf-8',
      'public, max-age=300, stale-while-revalidate=3600',
    ],
    [
      '/v1/feeds/lumen-and-co/products.ndjson',
      'application/x-ndjson; charset=utf-8',
      'public, max-age=300, stale-while-revalidate=3600',
    ],
    [
      '/v1/brands/lumen-and-co/',
      'text/html; charset=utf-8',
      'public, max-age=300, stale-while-revalidate=3600',
    ],
    ['/', 'text/html; charset=utf-8', 'public, max-age=300, stale-while-revalidate=3600'],
  ];
  for (const [p, type, cache] of cases) {
    const res = await get(feeds + p);
    t.equal(res.status, 200, p);
    t.equal(res.headers.get('content-type'), type, `${p} content type`);
    t.equal(res.headers.get('cache-control'), cache, `${p} cache control`);
    t.equal(res.headers.get('x-acp-version'), '2026-04-17');
    t.equal(res.headers.get('access-control-allow-origin'), '*');
    t.match(res.headers.get('etag'), /^"[0-9a-z-]+"$/);
    t.match(res.headers.get('x-ratelimit-remaining'), /^\d+$/);
    t.equal(res.headers.get('vary'), 'Accept-Encoding');
    await res.arrayBuffer();
  }
  const brand = await (await get(`${feeds}/v1/brands/lumen-and-co`)).json();
  t.match(
    brand,
    { slug: 'lumen-and-co', name: 'Lumen & Co', product_count: 1 },
    '/v1/brands/<slug> is the JSON',
  );
});

t.test(
  'an ETag the client holds gets 304, and stays while the file is not republished',
  async (t) => {
    const { s, ctx, feeds } = await publishedServer(t);
    const first = await get(`${feeds}/v1/feeds/northwind/products.ndjson`);
    const etag = first.headers.get('etag')!;
    await first.text();
    const again = await get(`${feeds}/v1/feeds/northwind/products.ndjson`, {
      'if-none-match': etag,
    });
    t.equal(again.status, 304);
    t.equal(await again.text(), '');
    t.equal(again.headers.get('etag'), etag);
    t.equal(again.headers.get('cache-control'), 'public, max-age=300, stale-while-revalidate=3600');
    const other = await get(`${feeds}/v1/feeds/northwind/products.ndjson`, {
      'if-none-match': '"nope", W/' + etag,
    });
    t.equal(other.status, 304, 'a list and a weak validator match too');
    await other.text();

    // Another brand changes: this file keeps its bytes and its ETag.
    await addProduct(s.server.store.db, { name: 'Lamp 2', attributes: { brand: 'Lumen & Co' } });
    await publishDiscovery(ctx);
    s.server.discovery.revalidate();
    const after = await get(`${feeds}/v1/feeds/northwind/products.ndjson`, {
      'if-none-match': etag,
    });
    t.equal(after.status, 304);
    const lumen = await get(`${feeds}/v1/feeds/lumen-and-co/products.ndjson`);
    t.equal(
      (await lumen.text()).split('\n').filter(Boolean).length,
      2,
      'the changed brand is served new',
    );
  },
);

t.test('precompressed siblings are chosen by Accept-Encoding', async (t) => {
  const { feeds } = await publishedServer(t);
  const url = `${feeds}/v1/feeds/lumen-and-co/products.ndjson`;
  const plain = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson');
  t.equal(plain.headers['content-encoding'], undefined);
  const br = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson', {
    'Accept-Encoding': 'gzip, deflate, br',
  });
  t.equal(br.headers['content-encoding'], 'br');
  t.same(zlib.brotliDecompressSync(br.body), plain.body);
  t.ok(br.body.length < plain.body.length);
  t.not(br.headers.etag, plain.headers.etag, 'each representation has its own ETag');
  const gz = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson', {
    'Accept-Encoding': 'gzip;q=1, br;q=0',
  });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.same(zlib.gunzipSync(gz.body), plain.body);
  const none = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson', {
    'Accept-Encoding': 'identity',
  });
  t.equal(none.headers['content-encoding'], undefined);
  t.equal(Number(none.headers['content-length']), plain.body.length);
  const res = await get(url); // fetch decodes what it asked for
  t.equal((await res.text()).length, plain.body.length);
});

t.test('unknown paths get a JSON 404 and other methods a JSON 405', async (t) => {
  const { feeds } = await publishedServer(t);
  const res = await get(`${feeds}/v1/brands/nobody`);
  t.equal(res.status, 404);
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.equal(res.headers.get('x-acp-version'), '2026-04-17');
  t.same(((await res.json()) as any).error.code, 'not_found');
  const post = await get(`${feeds}/v1/index.json`, {}, 'POST');
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
  t.equal(((await post.json()) as any).error.code, 'invalid_request');
  const head = await get(`${feeds}/v1/index.json`, {}, 'HEAD');
  t.equal(head.status, 200);
  t.ok(Number(head.headers.get('content-length')) > 0);
  const options = await get(
    `${feeds}/v1/index.json`,
    { origin: 'https://agent.example' },
    'OPTIONS',
  );
  t.equal(options.status, 204);
  t.equal(options.headers.get('access-control-allow-methods'), 'GET, HEAD, OPTIONS');
  t.match(options.headers.get('access-control-allow-headers'), 'If-None-Match');
});

t.test('no request path reaches a file outside the published registry', async (t) => {
  const { s, feeds } = await publishedServer(t);
  const secret = 'TOP-SECRET-VALUE';
  fs.writeFileSync(path.join(s.dir, 'secret.json'), JSON.stringify({ secret }));
  fs.writeFileSync(path.join(s.config.PUBLIC_DIR, '..', 'outside.html'), secret);
  const attempts = [
    '/../secret.json',
    '/v1/../../secret.json',
    '/v1/%2e%2e/%2e%2e/secret.json',
    '/v1/%2E%2E%2F%2E%2E%2Fsecret.json',
    '/%2e%2e%2fsecret.json',
    '/v1/%252e%252e/%252e%252e/secret.json',
    '/..%5c..%5csecret.json',
    '/v1/..\\..\\secret.json',
    `/${encodeURIComponent(path.join(s.dir, 'secret.json'))}`,
    `/${path.join(s.dir, 'secret.json')}`,
    `//${path.join(s.dir, 'secret.json').slice(1)}`,
    '/v1/index.json%00.html',
    '/v1/index.json%00',
    '/%00/../secret.json',
    '/_headers',
    '/.published',
    '/v1/index.json.gz',
    '/v1/feeds/lumen-and-co/products.ndjson.br',
    '/outside.html/..%2f..%2foutside.html',
    `http://evil.example/../secret.json`,
    '/%',
    '/%zz/index.json',
  ];
  for (const target of attempts) {
    const res = await rawRequest(feeds, target);
    t.ok([400, 404].includes(res.status), `${target} -> ${res.status}`);
    t.notMatch(res.body.toString('latin1'), secret, `${target} leaks nothing`);
    t.notMatch(res.body.toString('latin1'), 'X-ACP-Version', `${target} leaks no config`);
  }
  // Sanity: the same client does reach published files.
  t.equal((await rawRequest(feeds, '/v1/index.json')).status, 200);
});

t.test('per-IP limits: 60 a minute, then 429 with Retry-After until the window ends', async (t) => {
  const clock = createClock('2026-11-21T10:00:00.000Z');
  const { feeds } = await publishedServer(t, {}, clock.now);
  const remaining: number[] = [];
  for (let i = 0; i < 60; i++) {
    const res = await get(`${feeds}/v1/index.json`);
    t.equal(res.status, 200);
    remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    await res.arrayBuffer();
  }
  t.same(
    remaining,
    Array.from({ length: 60 }, (_, i) => 59 - i),
    'the least remaining of the three windows',
  );
  const refused = await get(`${feeds}/v1/index.json`);
  t.equal(refused.status, 429);
  t.equal(refused.headers.get('retry-after'), '60');
  t.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  t.equal(refused.headers.get('cache-control'), 'no-store');
  t.match(await refused.json(), {
    error: { code: 'rate_limit_exceeded', details: /60 requests a minute/ },
  });
  clock.advance(45.5);
  const still = await get(`${feeds}/v1/brands/northwind`);
  t.equal(still.status, 429, 'every path shares the budget');
  t.equal(still.headers.get('retry-after'), '15');
  await still.text();
  clock.advance(14.5);
  const next = await get(`${feeds}/v1/index.json`);
  t.equal(next.status, 200, 'a new minute starts over');
  t.equal(next.headers.get('x-ratelimit-remaining'), '59');
  await next.text();
});

t.test('the hour and day limits also apply, from the settings', async (t) => {
  const clock = createClock('2026-11-21T10:59:00.000Z');
  const { feeds } = await publishedServer(
    t,
    {
      DISCOVERY_LIMIT_PER_MINUTE: '0',
      DISCOVERY_LIMIT_PER_HOUR: '3',
      DISCOVERY_LIMIT_PER_DAY: '5',
    },
    clock.now,
  );
  const statuses: string[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await get(`${feeds}/v1/index.json`);
    statuses.push(`${res.status}:${res.headers.get('x-ratelimit-remaining')}`);
    if (res.status === 429) t.equal(res.headers.get('retry-after'), '60', 'until the next hour');
    await res.text();
  }
  t.same(statuses, ['200:2', '200:1', '200:0', '429:0']);
  clock.advance(60);
  const day: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await get(`${feeds}/v1/index.json`);
    day.push(`${res.status}:${res.headers.get('x-ratelimit-remaining')}`);
    if (res.status === 429)
      t.equal(res.headers.get('retry-after'), String(13 * 3600), 'until midnight UTC');
    await res.text();
  }
  t.same(day, ['200:1', '200:0', '429:0'], 'the day window counts across hours');
});

t.test('each request is recorded with its agent, in batches', async (t) => {
  const clock = createClock('2026-11-21T10:00:00.000Z');
  // The log's own interval far away: only flushRequests() writes, however slow the machine
  // (at the default second, three requests on a loaded machine could see a write between).
  const { s, feeds } = await publishedServer(t, {}, clock.now, 10 * 60_000);
  const gpt =
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot';
  await (await get(`${feeds}/v1/feeds/northwind/products.ndjson`, { 'user-agent': gpt })).text();
  await (await get(`${feeds}/v1/brands/lumen-and-co`, { 'user-agent': 'curl/8.4.0' })).text();
  await (await get(`${feeds}/v1/missing.json`, { 'user-agent': 'Claude-User/1.0' })).text();
  const db = s.server.store.db;
  t.equal(
    (await db.selectFrom('interactions').selectAll().execute()).length,
    0,
    'not written one by one',
  );
  await s.server.discovery.flushRequests();
  const rows = await db.selectFrom('interactions').selectAll().orderBy('id').execute();
  const ndjson = fs.statSync(
    path.join(s.config.PUBLIC_DIR, 'v1/feeds/northwind/products.ndjson'),
  ).size;
  t.match(rows, [
    {
      at: '2026-11-21T10:00:00.000Z',
      method: 'GET',
      path: '/v1/feeds/northwind/products.ndjson',
      brand: 'northwind',
      status: 200,
      user_agent: gpt,
      agent: 'GPTBot',
      operator: 'OpenAI',
      kind: 'training',
      source: 'server',
    },
    {
      path: '/v1/brands/lumen-and-co',
      brand: 'lumen-and-co',
      status: 200,
      kind: 'bot',
    },
    { path: '/v1/missing.json', brand: null, status: 404, agent: 'Claude-User', kind: 'assistant' },
  ]);
  t.ok(rows[0]!.bytes! > 0 && rows[0]!.bytes! <= ndjson, 'bytes sent (gzip, as fetch asks for it)');
});

t.test('a publication by another process is picked up without a restart', async (t) => {
  const { s, feeds } = await publishedServer(t);
  const before = (await (await get(`${feeds}/v1/index.json`)).json()) as any;
  t.equal(before.brand_count, 2);
  await addProduct(s.server.store.db, { name: 'Mug', attributes: { brand: 'Tidewater' } });
  const script = path.join(repoRoot(), 'build', 'test', 'support', 'publish-discovery.js');
  const { stdout } = await run(process.execPath, [script], {
    env: {
      ...process.env,
      DATA_DIR: s.config.DATA_DIR,
      PUBLIC_DIR: s.config.PUBLIC_DIR,
      ...(s.config.DATABASE_URL ? { DATABASE_URL: s.config.DATABASE_URL } : {}),
      FEEDS_URL: 'https://feeds.example.com',
      LOG_LEVEL: 'silent',
    },
  });
  t.match(JSON.parse(stdout).summary[0], /rebuilt 1/);
  let seen = 0;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    seen = ((await (await get(`${feeds}/v1/index.json`)).json()) as any).brand_count;
    if (seen === 3) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(seen, 3, 'the new index is served');
  const page = await get(`${feeds}/v1/brands/tidewater/`);
  t.equal(page.status, 200);
  await page.text();
});

t.test(
  'files larger than the cache allows are streamed from disk with the same headers',
  async (t) => {
    const { feeds } = await publishedServer(t, { DISCOVERY_CACHE_MB: '0' });
    const res = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson');
    t.equal(res.status, 200);
    t.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    t.equal(Number(res.headers['content-length']), res.body.length);
    const again = await rawRequest(feeds, '/v1/feeds/lumen-and-co/products.ndjson', {
      'If-None-Match': res.headers.etag!,
    });
    t.equal(again.status, 304);
  },
);

t.test('serve starts the discovery server on FEEDS_PORT and stops it on close', async (t) => {
  const s: TestServer = await startTestServer(t);
  const url = s.server.discovery.url;
  t.not(new URL(url).port, new URL(s.url).port);
  const res = await get(`${url}/v1/index.json`);
  t.equal(res.status, 404, 'nothing published yet');
  await res.text();
  await s.server.close();
  await t.rejects(get(`${url}/v1/index.json`));
});
