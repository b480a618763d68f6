import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pino } from 'pino';
import t from 'tap';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { openPipelineContext, runPipeline } from '../../pipeline/run.js';
import { loadConfig, parsePublishTarget, type Config } from '../../src/config.js';
import type { Store } from '../../src/db/store.js';
import { updateProduct } from '../../src/domain/products/products.js';
import { addProduct } from '../support/discovery.js';
import { startTestStore } from '../support/pipeline.js';
import { s3Env, startS3, type S3Fake } from '../support/s3.js';

/** One pipeline run of the discovery stage, wired as `serve` and `build` wire it. */
async function run(store: Store, config: Config) {
  const { ctx, close } = openPipelineContext(store, { config, logger: pino({ level: 'silent' }) });
  try {
    return await runPipeline(ctx, [publishDiscovery]);
  } finally {
    await close();
  }
}

function puts(fake: S3Fake): string[] {
  return fake.requests
    .filter((r) => r.method === 'PUT')
    .map((r) => decodeURIComponent(r.url.replace(/^\/shelf\/registry\//, '')));
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

t.test('the tree goes to the bucket: changed objects only, brands before the index', async (t) => {
  const fake = await startS3(t);
  const s = await startTestStore(t, s3Env(fake));
  await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } });
  await addProduct(s.db, { id: 'b1', name: 'Bolt', attributes: { brand: 'Bolts & Co' } });

  const first = await run(s.store, s.config);
  t.equal(first.status, 'succeeded', first.stages.flatMap((r) => r.summary).join('; '));
  const sent = puts(fake);
  const at = (key: string) => sent.indexOf(key);
  t.ok(at('v1/brands/acme.json') >= 0 && at('v1/feeds/acme/products.ndjson') >= 0);
  const feed = 'v1/feeds/acme/products.ndjson';
  t.ok(at(`${feed}.gz`) < at(feed) && at(`${feed}.br`) < at(feed), 'siblings before their file');
  t.notOk(
    sent.some((k) => /\.(gz|br)$/.test(k) && !k.startsWith('v1/feeds/')),
    'siblings of the feeds alone: the CDN compresses the small files itself',
  );
  const lastBrand = Math.max(...sent.filter((k) => k.startsWith('v1/brands/')).map(at));
  t.ok(lastBrand < at('v1/index.json'), 'every brand object before index.json');
  t.ok(lastBrand < at('sitemap.xml'), 'and before the sitemap, which names the brand pages');
  t.ok(at('sitemap.xml') < at('index.html'), 'the sitemap before the home page');
  t.ok(at('v1/index.json') < at('index.html'), 'index.json before the home page');
  t.equal(sent.length, new Set(sent).size, 'each object once');
  t.notOk(
    sent.some((k) => k.startsWith('.') && !k.startsWith('.well-known/')),
    'no hidden file (marker, temporaries)',
  );
  t.ok(at('.well-known/ucp') >= 0, 'the UCP profile is published (/.well-known/ucp)');
  t.notOk(
    sent.some((k) => k.startsWith('_') || k.startsWith('cdn/')),
    'no serving rule (_headers, cdn/): they configure the CDN',
  );
  t.ok(fs.existsSync(path.join(s.config.PUBLIC_DIR, 'cdn/cloudfront-function.js')));

  const root = s.config.PUBLIC_DIR;
  const index = await fake.get('registry/v1/index.json');
  const local = fs.readFileSync(path.join(root, 'v1/index.json'));
  t.same(index?.body, local, 'the bucket holds the tree');
  t.equal(index?.headers.get('content-type'), 'application/json; charset=utf-8');
  t.match(index?.headers.get('cache-control'), /max-age=60.*stale-if-error=86400/);
  t.equal(index?.headers.get('x-amz-meta-sha256'), sha256(local));
  const gz = await fake.get(`registry/${feed}.gz`);
  t.equal(gz?.headers.get('content-encoding'), 'gzip');
  t.equal(gz?.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
  t.same(zlib.gunzipSync(gz!.body), fs.readFileSync(path.join(root, feed)));
  const bare = await fake.get('registry/v1/brands/acme');
  t.same(bare?.body, fs.readFileSync(path.join(root, 'v1/brands/acme.json')), 'extensionless copy');
  t.equal(bare?.headers.get('content-type'), 'application/json; charset=utf-8');
  const ndjson = await fake.get('registry/v1/feeds/acme/products.ndjson');
  t.equal(ndjson?.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');

  // Nothing changed: one listing, no write.
  fake.requests.length = 0;
  const again = await run(s.store, s.config);
  t.equal(again.status, 'succeeded');
  t.same(puts(fake), [], 'a run that changed nothing uploads nothing');
  t.same(
    fake.requests.map((r) => r.method),
    ['GET'],
    'one listing',
  );
  t.match(fake.requests[0]!.url, /list-type=2/);

  // One product changed: its brand's objects and the index, nothing of the other brand.
  fake.requests.length = 0;
  await updateProduct(s.db, 'a1', { name: 'Anvil, heavier' });
  const third = await run(s.store, s.config);
  t.equal(third.status, 'succeeded');
  const changed = puts(fake);
  t.ok(changed.includes('v1/feeds/acme/products.ndjson'));
  t.notOk(
    changed.some((k) => k.includes('bolts')),
    'the other brand is not uploaded',
  );
  // Objects of one step go up side by side, so only the steps' order is fixed: the brand's
  // objects, then the files that name them (index.json, sitemap.xml, ...), then the home page.
  const namer = (k: string) => k === 'v1/index.json' || !k.startsWith('v1/');
  const firstNamer = changed.findIndex(namer);
  t.ok(firstNamer > 0, 'the brand changed, and so did a file that names it');
  t.ok(changed.slice(firstNamer).every(namer), 'every brand object before the files naming them');

  // The manifest was lost: every file is hashed again, and still nothing is uploaded.
  fs.rmSync(path.join(s.config.DATA_DIR, 'publish'), { recursive: true });
  fake.requests.length = 0;
  t.equal((await run(s.store, s.config)).status, 'succeeded');
  t.same(puts(fake), []);
});

t.test('one price change: at most 10 PUTs, and which they are', async (t) => {
  const fake = await startS3(t);
  const s = await startTestStore(t, s3Env(fake));
  const morning = new Date('2026-11-20T08:00:00.000Z');
  for (const [id, brand] of [
    ['a1', 'Acme'],
    ['a2', 'Acme'],
    ['b1', 'Bolts'],
  ] as const)
    await addProduct(s.db, { id, name: `Item ${id}`, price: 10, attributes: { brand } }, morning);
  t.equal((await run(s.store, s.config)).status, 'succeeded');

  // Later the same day: the feeds with their siblings, the page that shows the price, the
  // brand's JSON (its updated_at and price range) with its extensionless copy, and the index
  // (the brand's updated_at). Not the sitemap, llms.txt or the home page: they show dates and
  // counts, which did not change.
  fake.requests.length = 0;
  await updateProduct(s.db, 'a1', { price: 12.5 }, new Date('2026-11-20T15:00:00.000Z'));
  t.equal((await run(s.store, s.config)).status, 'succeeded');
  const feeds = ['json', 'ndjson'].flatMap((ext) =>
    ['', '.gz', '.br'].map((suffix) => `v1/feeds/acme/products.${ext}${suffix}`),
  );
  const expected = [
    ...feeds,
    'v1/brands/acme/index.html',
    'v1/brands/acme.json',
    'v1/brands/acme',
    'v1/index.json',
  ];
  t.same(puts(fake).sort(), expected.sort(), 'the objects one price change replaces');
  t.ok(puts(fake).length <= 10, `${puts(fake).length} PUTs (target 10)`);
  // The files the run wrote went up (and would be purged) before the bucket was listed.
  t.same(
    fake.requests.map((r) => r.method),
    [...expected.map(() => 'PUT'), 'GET'],
    'the uploads, then the one listing',
  );

  // The first change of a new day also changes the dates the sitemap and the home page show.
  fake.requests.length = 0;
  await updateProduct(s.db, 'a1', { price: 13 }, new Date('2026-11-21T09:00:00.000Z'));
  t.equal((await run(s.store, s.config)).status, 'succeeded');
  t.same(puts(fake).sort(), [...expected, 'sitemap.xml', 'index.html'].sort());
});

t.test('plain objects only for encodings=plain', async (t) => {
  const fake = await startS3(t);
  const env = s3Env(fake);
  env.PUBLISH_TARGET += '&encodings=plain';
  const s = await startTestStore(t, env);
  await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } });
  t.equal((await run(s.store, s.config)).status, 'succeeded');
  const sent = puts(fake);
  t.ok(sent.includes('v1/brands/acme.json'));
  t.notOk(
    sent.some((k) => /\.(gz|br)$/.test(k)),
    'no compressed sibling',
  );
});

t.test(
  'a wrong secret, a missing bucket, a refused endpoint: a failed run, in words',
  async (t) => {
    const fake = await startS3(t);
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        'wrong secret',
        { AWS_SECRET_ACCESS_KEY: 'not-the-secret' },
        /SignatureDoesNotMatch.*AWS_SECRET_ACCESS_KEY/,
      ],
      [
        'missing bucket',
        {
          PUBLISH_TARGET: `s3://nobucket?endpoint=${fake.endpoint}&region=us-east-1`,
        },
        /NoSuchBucket/,
      ],
      [
        'guarded endpoint',
        { ALLOW_PRIVATE_TARGETS: 'false' },
        /loopback address.*ALLOW_PRIVATE_TARGETS/,
      ],
    ];
    for (const [name, env, error] of cases) {
      const s = await startTestStore(t, s3Env(fake, env));
      await addProduct(s.db, { id: 'a1', name: 'Anvil', attributes: { brand: 'Acme' } });
      const result = await run(s.store, s.config);
      t.equal(result.status, 'failed', name);
      t.match(result.stages[0]?.summary.join('\n'), error, name);
      t.ok(
        fs.existsSync(path.join(s.config.PUBLIC_DIR, 'v1/index.json')),
        `${name}: the tree on disk is written`,
      );
    }
    t.same(
      fake.requests.filter((r) => r.method === 'PUT'),
      [],
      'nothing was written with a refused signature',
    );
  },
);

t.test('PUBLISH_TARGET: bad values are refused with the variable and the problem', async (t) => {
  const bad: [string, RegExp][] = [
    ['https://bucket', /scheme is https/],
    ['s3://b?endpoint=http://x', /bucket name 'b'/],
    ['s3://bucket', /endpoint= \(or region= for AWS S3\) is missing/],
    ['s3://bucket?endpoint=ftp://x', /not http or https/],
    ['s3://bucket/a//b?region=eu-west-1', /prefix 'a\/\/b' has an empty/],
    ['s3://bucket?region=eu-west-1&colour=blue', /unknown parameter 'colour'/],
    ['s3://key:secret@bucket?region=eu-west-1', /credentials do not belong/],
  ];
  for (const [value, problem] of bad) {
    t.throws(
      () =>
        loadConfig({ PUBLISH_TARGET: value, AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' }),
      {
        message: new RegExp(`^PUBLISH_TARGET: .*${problem.source}`),
      },
    );
  }
  t.throws(() => loadConfig({ PUBLISH_TARGET: 's3://bucket?region=eu-west-1' }), {
    message: /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
  });
  const r2 = parsePublishTarget('s3://shelf/site?endpoint=https://acc.r2.cloudflarestorage.com');
  t.same(
    { region: r2.region, encodings: r2.encodings, prefix: r2.prefix, style: r2.style },
    { region: 'auto', encodings: 'plain', prefix: 'site/', style: 'path' },
  );
  const aws = parsePublishTarget('s3://shelf?region=eu-west-1&style=virtual');
  t.equal(aws.endpoint.toString(), 'https://s3.eu-west-1.amazonaws.com/');
  t.equal(aws.encodings, 'siblings');
});
