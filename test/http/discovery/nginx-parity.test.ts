// stores: sqlite-only — nginx parity: nginx and the discovery server answer alike from the same
//   published files; the store only feeds the pipeline, whose PostgreSQL path
//   test/pipeline/discovery-publish.test.ts runs
import path from 'node:path';
import zlib from 'node:zlib';
import { pino } from 'pino';
import t from 'tap';
import { nginxConfigPath, publishDiscovery } from '../../../pipeline/discovery/index.js';
import { startDiscoveryServer } from '../../../src/http/discovery/server.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { addProduct, rawRequest, type RawResponse } from '../../support/discovery.js';
import { freePort, nginxMissing, startNginx } from '../../support/nginx.js';
import { createPipelineContext, startTestStore } from '../../support/pipeline.js';

const missing = nginxMissing();

// Headers both servers must give alike (ETag values differ: each derives its own).
const COMPARED = [
  'content-type',
  'cache-control',
  'x-acp-version',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'x-content-type-options',
  'vary',
  'content-encoding',
  'x-ratelimit-remaining',
  'allow',
];

function pick(res: RawResponse) {
  return Object.fromEntries(COMPARED.map((h) => [h, res.headers[h] ?? null]));
}

function decoded(res: RawResponse): string {
  const enc = res.headers['content-encoding'];
  const body = res.headers['transfer-encoding'] === 'chunked' ? unchunk(res.body) : res.body;
  if (enc === 'br') return zlib.brotliDecompressSync(body).toString();
  if (enc === 'gzip') return zlib.gunzipSync(body).toString();
  return body.toString();
}

function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', i);
    const size = parseInt(body.subarray(i, eol).toString(), 16);
    if (!size) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

t.test(
  'nginx with the generated config answers like the embedded server',
  { skip: missing ?? false },
  async (t) => {
    const port = await freePort();
    const s = await startTestStore(t, {
      FEEDS_PORT: String(port),
      FEEDS_URL: 'https://feeds.example.com',
    });
    await seedDemo(s.db, { currency: 'USD' });
    await addProduct(s.db, { name: '<script>x</script>', attributes: { brand: 'Edge & Co' } });
    await publishDiscovery(createPipelineContext(t, s.store, s.config));
    const nginx = await startNginx({
      dir: path.join(s.dir, 'nginx'),
      include: nginxConfigPath(s.config),
      port,
    });
    t.teardown(() => nginx.stop());
    const embedded = await startDiscoveryServer({
      config: s.config,
      db: s.db,
      logger: pino({ level: 'silent' }),
      port: 0,
    });
    t.teardown(() => embedded.close());

    // Windows are aligned to the real clock on both: start early in a minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));

    const requests: [string, Record<string, string>, string?][] = [
      ['/', {}],
      ['/v1/index.json', {}],
      ['/v1/index.json', { 'Accept-Encoding': 'gzip' }],
      ['/v1/index.json', { 'Accept-Encoding': 'br, gzip' }],
      ['/v1/brands/northwind-outfitters', {}],
      ['/v1/brands/northwind-outfitters.json', { 'Accept-Encoding': 'br' }],
      ['/v1/brands/edge-and-co/', {}],
      ['/v1/brands/edge-and-co/index.html', { 'Accept-Encoding': 'gzip' }],
      ['/v1/feeds/pixel-forge/products.json', {}],
      ['/v1/feeds/pixel-forge/products.ndjson', {}],
      ['/v1/feeds/pixel-forge/products.ndjson', { 'Accept-Encoding': 'gzip, br' }],
      ['/v1/brands/nobody', {}],
      ['/v1/nothing.txt', {}],
      ['/_headers', {}],
      ['/.published', {}],
      ['/v1/index.json.gz', {}],
      ['/v1/index.json', {}, 'POST'],
      ['/v1/index.json', {}, 'HEAD'],
      ['/v1/index.json', { Origin: 'https://agent.example' }, 'OPTIONS'],
      ['/.well-known/ucp', {}],
      ['/robots.txt', {}],
      ['/sitemap.xml', {}],
      ['/llms.txt', {}],
      ['/.well-known/other', {}],
    ];
    for (const [target, headers, method] of requests) {
      const label = `${method ?? 'GET'} ${target} ${JSON.stringify(headers)}`;
      const a = await rawRequest(embedded.url, target, headers, method);
      const b = await rawRequest(nginx.url, target, headers, method);
      t.equal(b.status, a.status, `${label}: status`);
      t.same(pick(b), pick(a), `${label}: headers`);
      if (method !== 'HEAD' && a.status !== 204) t.equal(decoded(b), decoded(a), `${label}: body`);
      if (a.status === 200) {
        t.ok(a.headers.etag && b.headers.etag, `${label}: both give an ETag`);
        const a304 = await rawRequest(
          embedded.url,
          target,
          { ...headers, 'If-None-Match': a.headers.etag! },
          method,
        );
        const b304 = await rawRequest(
          nginx.url,
          target,
          { ...headers, 'If-None-Match': b.headers.etag! },
          method,
        );
        t.equal(a304.status, 304, `${label}: embedded 304`);
        t.equal(b304.status, 304, `${label}: nginx 304`);
        t.same(pick(b304), pick(a304), `${label}: 304 headers`);
      }
    }

    // The rest of the minute's budget, then the same refusal from both.
    const statuses = async (url: string) => {
      const seen: string[] = [];
      for (;;) {
        const res = await rawRequest(url, '/v1/index.json');
        seen.push(`${res.status}:${res.headers['x-ratelimit-remaining']}`);
        if (res.status === 429) return { seen, res };
        if (seen.length > 70) return { seen, res };
      }
    };
    const a = await statuses(embedded.url);
    const b = await statuses(nginx.url);
    t.same(b.seen, a.seen, 'the same requests are allowed, with the same X-RateLimit-Remaining');
    t.equal(a.seen.at(-1), '429:0');
    t.same(pick(b.res), pick(a.res), '429 headers');
    t.same(JSON.parse(decoded(b.res)), JSON.parse(decoded(a.res)), '429 body');
    const ra = Number(a.res.headers['retry-after']);
    const rb = Number(b.res.headers['retry-after']);
    t.ok(ra >= 1 && ra <= 60 && Math.abs(ra - rb) <= 1, `Retry-After ${ra} and ${rb}`);
  },
);
