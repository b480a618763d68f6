import vm from 'node:vm';
import { pino } from 'pino';
import t from 'tap';
import {
  renderCloudflareRules,
  renderCloudFrontFunction,
} from '../../pipeline/discovery/cdn-config.js';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { openPipelineContext, runPipeline } from '../../pipeline/run.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Store } from '../../src/db/store.js';
import { updateProduct } from '../../src/domain/products/products.js';
import { listPublications, PURGE_ATTEMPTS } from '../../src/domain/publications/publications.js';
import { cloudfrontPaths, purgeUrlsOf } from '../../src/publish/cdn.js';
import { CDN_TOKEN, startCdnFake } from '../support/cdn.js';
import { addProduct } from '../support/discovery.js';
import { createClock, startTestStore } from '../support/pipeline.js';
import { S3RVER_KEY, s3Env, startS3 } from '../support/s3.js';

async function run(store: Store, config: Config, now?: () => Date) {
  const { ctx, close } = openPipelineContext(store, {
    config,
    logger: pino({ level: 'silent' }),
    ...(now ? { now } : {}),
  });
  try {
    return await runPipeline(ctx, [publishDiscovery]);
  } finally {
    await close();
  }
}

const FEEDS = 'https://feeds.example.com';
const MORNING = new Date('2026-11-20T08:00:00.000Z');
const NOON = new Date('2026-11-20T12:00:00.000Z');

/** What a change of Acme's product purges: its brand's URLs, then the index, then the home page. */
const ACME_URLS = [
  `${FEEDS}/v1/brands/acme`,
  `${FEEDS}/v1/brands/acme.json`,
  `${FEEDS}/v1/brands/acme/`,
  `${FEEDS}/v1/feeds/acme/products.json`,
  `${FEEDS}/v1/feeds/acme/products.ndjson`,
  // The sitemap names every brand page: a new brand changes it.
  `${FEEDS}/sitemap.xml`,
  `${FEEDS}/v1/index.json`,
  `${FEEDS}/`,
];

t.test('purge URLs: plain addresses, pages as directories, index then home last', async (t) => {
  t.same(
    purgeUrlsOf(
      [
        'sitemap.xml',
        'v1/brands/a.json.gz',
        'v1/brands/a.json',
        'v1/brands/a',
        '_redirects',
        'v1/brands/a/index.html',
        'v1/index.json',
        'index.html',
      ],
      FEEDS,
    ),
    [
      `${FEEDS}/v1/brands/a`,
      `${FEEDS}/v1/brands/a.json`,
      `${FEEDS}/v1/brands/a/`,
      `${FEEDS}/sitemap.xml`,
      `${FEEDS}/v1/index.json`,
      `${FEEDS}/`,
    ],
  );
});

const providers = [
  ['cloudflare', 'zone0123', { CLOUDFLARE_API_TOKEN: CDN_TOKEN }],
  ['fastly', 'SERVICE1', { FASTLY_API_TOKEN: CDN_TOKEN }],
  ['cloudfront', 'E2DIST', {}],
  ['bunny', '12345', { BUNNY_API_KEY: CDN_TOKEN }],
] as const;

for (const [provider, id, tokens] of providers) {
  t.test(`${provider}: exactly the changed URLs, as the API documents`, async (t) => {
    const fake = await startS3(t);
    const cdn = await startCdnFake(t, { id: S3RVER_KEY, secret: S3RVER_KEY });
    const s = await startTestStore(t, {
      ...s3Env(fake),
      CDN_PURGE: `${provider}://${id}?api=${cdn.url}/${provider}`,
      ...tokens,
    });
    await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } }, MORNING);
    await addProduct(s.db, { id: 'b1', name: 'Bolt', attributes: { brand: 'Bolts' } }, MORNING);
    t.equal((await run(s.store, s.config)).status, 'succeeded');
    t.same(cdn.calls.flatMap((c) => c.targets).length > 0, true, 'the first publication purges');
    cdn.calls.length = 0;
    // The same day: the home page and the sitemap (which show dates) keep their bytes; the
    // index changes.
    await updateProduct(s.db, 'a1', { name: 'Anvil, heavier' }, NOON);
    t.equal((await run(s.store, s.config)).status, 'succeeded');
    t.same(cdn.violations, []);
    const purged = cdn.calls.flatMap((c) => c.targets);
    const urls = ACME_URLS.filter((u) => u !== `${FEEDS}/` && u !== `${FEEDS}/sitemap.xml`);
    const expected = provider === 'cloudfront' ? [...new Set(urls.flatMap(cloudfrontPaths))] : urls;
    t.same(purged, expected, 'brand URLs, then the index');
    const { publications } = await listPublications(s.db, {}, { limit: 1, offset: 0 });
    t.same([publications[0]?.purge_status, publications[0]?.purge_attempts], ['succeeded', 1]);

    // Nothing changed: nothing to purge.
    cdn.calls.length = 0;
    t.equal((await run(s.store, s.config)).status, 'succeeded');
    t.same(cdn.calls, []);
  });
}

t.test('a refused purge never fails the publish; it is retried until it succeeds', async (t) => {
  const fake = await startS3(t);
  const cdn = await startCdnFake(t, { id: S3RVER_KEY, secret: S3RVER_KEY });
  const s = await startTestStore(t, {
    ...s3Env(fake),
    CDN_PURGE: `cloudflare://zone0123?api=${cdn.url}/cloudflare`,
    CLOUDFLARE_API_TOKEN: CDN_TOKEN,
  });
  const clock = createClock();
  await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } });
  cdn.refuse = true;
  const first = await run(s.store, s.config, clock.now);
  t.equal(first.status, 'succeeded', 'the publish succeeds');
  let [row] = (await listPublications(s.db, {}, { limit: 1, offset: 0 })).publications;
  t.same([row?.status, row?.purge_status, row?.purge_attempts], ['succeeded', 'pending', 1]);
  t.match(row?.purge_error, /Cloudflare purge: HTTP 403.*Authentication error/);

  // Not due yet: the next run leaves it; a minute later it is retried, and succeeds.
  cdn.refuse = false;
  await run(s.store, s.config, clock.now);
  t.same(cdn.calls, []);
  clock.advance(60);
  await run(s.store, s.config, clock.now);
  t.equal(cdn.calls.length, 1);
  t.ok(cdn.calls[0]!.targets.includes(`${FEEDS}/v1/index.json`));
  const all = (await listPublications(s.db, {}, { limit: 10, offset: 0 })).publications;
  row = all.find((p) => p.id === row!.id);
  t.same([row?.purge_status, row?.purge_attempts, row?.purge_error], ['succeeded', 2, null]);
  t.ok(PURGE_ATTEMPTS > 2);
});

t.test('webhook: discovery.published {urls} goes through the outbox', async (t) => {
  const fake = await startS3(t);
  const s = await startTestStore(t, { ...s3Env(fake), CDN_PURGE: 'webhook' });
  await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } });
  t.equal((await run(s.store, s.config)).status, 'succeeded');
  const events = await s.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', '=', 'discovery.published')
    .execute();
  t.equal(events.length, 1);
  const data = JSON.parse(String(events[0]!.data)) as { urls: string[]; publication_id: string };
  // The first publication: every root file agents look for is new too, after the brand's.
  const [home, index, sitemap] = [ACME_URLS.at(-1)!, ACME_URLS.at(-2)!, ACME_URLS.at(-3)!];
  t.same(data.urls, [
    ...ACME_URLS.slice(0, -3),
    `${FEEDS}/.well-known/ucp`,
    `${FEEDS}/llms.txt`,
    `${FEEDS}/robots.txt`,
    sitemap,
    index,
    home,
  ]);
  t.match(data.publication_id, /^pub_/);
});

t.test('CDN_PURGE: bad values and missing tokens are refused in words', async (t) => {
  const base = { FEEDS_URL: FEEDS };
  t.throws(() => loadConfig({ ...base, CDN_PURGE: 'akamai://x' }), {
    message: /^CDN_PURGE: unknown CDN 'akamai'/,
  });
  t.throws(() => loadConfig({ ...base, CDN_PURGE: 'cloudflare://zone?colour=1' }), {
    message: /unknown parameter 'colour'/,
  });
  t.throws(() => loadConfig({ ...base, CDN_PURGE: 'cloudflare://zone' }), {
    message: /^CLOUDFLARE_API_TOKEN: required when CDN_PURGE/,
  });
  t.throws(() => loadConfig({ ...base, CDN_PURGE: 'cloudfront://E2' }), {
    message: /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: required/,
  });
  t.equal(loadConfig({ ...base, CDN_PURGE: 'webhook' }).CDN_PURGE, 'webhook');
});

t.test(
  'cdn/ rules: the CloudFront function maps each address to an object the purge names',
  async (t) => {
    type Handler = (event: {
      request: { uri: string; headers: Record<string, { value: string }> };
    }) => { uri: string };
    const handler = vm.runInNewContext(`${renderCloudFrontFunction()}\nhandler`, {}) as Handler;
    const cases: [string, string | undefined, string][] = [
      // Only the feeds have siblings in the bucket; CloudFront compresses the rest itself.
      ['/v1/brands/acme', 'gzip, deflate, br', '/v1/brands/acme.json'],
      ['/v1/brands/acme.json', undefined, '/v1/brands/acme.json'],
      ['/v1/brands/acme/', 'br;q=1', '/v1/brands/acme/index.html'],
      ['/', 'identity', '/index.html'],
      ['/v1/index.json', 'gzip, br', '/v1/index.json'],
      ['/v1/feeds/acme/products.ndjson', 'gzip', '/v1/feeds/acme/products.ndjson.gz'],
      ['/v1/feeds/acme/products.json', 'gzip, deflate, br', '/v1/feeds/acme/products.json.br'],
      ['/v1/feeds/acme/products.json', undefined, '/v1/feeds/acme/products.json'],
    ];
    for (const [uri, accept, object] of cases) {
      const headers: Record<string, { value: string }> = accept
        ? { 'accept-encoding': { value: accept } }
        : {};
      t.equal(handler({ request: { uri, headers } }).uri, object, `${uri} (${accept ?? 'none'})`);
      t.ok(
        cloudfrontPaths(`${FEEDS}${uri}`).includes(object),
        `the purge of ${uri} names ${object}`,
      );
    }
    t.same(cloudfrontPaths(`${FEEDS}/v1/brands/acme/`), ['/v1/brands/acme/index.html']);
    t.same(cloudfrontPaths(`${FEEDS}/v1/feeds/acme/products.json`), [
      '/v1/feeds/acme/products.json',
      '/v1/feeds/acme/products.json.gz',
      '/v1/feeds/acme/products.json.br',
    ]);
    const rules = JSON.parse(renderCloudflareRules()) as {
      rules: {
        action: string;
        action_parameters: { headers: Record<string, { value: string }> };
      }[];
    };
    t.equal(rules.rules[0]?.action, 'rewrite');
    t.equal(rules.rules[0]?.action_parameters.headers['X-ACP-Version']?.value, '2026-04-17');
    t.equal(rules.rules[0]?.action_parameters.headers['Access-Control-Allow-Origin']?.value, '*');
  },
);
