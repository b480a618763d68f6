import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { objectStorageSettings } from '../../pipeline/object-storage.js';
import { updateProduct } from '../../src/domain/products/products.js';
import { syncTree, type ObjectStorageSettings } from '../../src/publish/s3.js';
import { MAIN } from '../support/cli.js';
import { addProduct } from '../support/discovery.js';
import {
  createClock,
  createPipelineContext,
  startTestStore,
  type TestStore,
} from '../support/pipeline.js';
import { s3Env, startS3, type S3Fake } from '../support/s3.js';
import { testStoreEnv } from '../support/store.js';

/** A store with three brands published on disk, and the settings of a sync to the fake. */
async function setUp(t: Test, fake: S3Fake) {
  const s = await startTestStore(t, s3Env(fake));
  for (const [id, brand] of [
    ['a1', 'Acme'],
    ['b1', 'Bolts'],
    ['c1', 'Cogs'],
  ] as const)
    await addProduct(s.db, { id, name: `${brand} thing`, attributes: { brand } });
  await publishLocally(t, s);
  const settings: ObjectStorageSettings = {
    ...objectStorageSettings(s.config)!,
    client: { backoffMs: 1 },
  };
  return { s, settings };
}

/** The discovery stage alone, writing PUBLIC_DIR (the default FsPublisher, no upload). */
async function publishLocally(t: Test, s: TestStore) {
  const result = await publishDiscovery(createPipelineContext(t, s.store, s.config));
  t.same(result.failures, []);
}

function keysOf(fake: S3Fake, method: string, suffix = ''): string[] {
  return fake.requests
    .filter((r) => r.method === method && r.url.endsWith(suffix))
    .map((r) => decodeURIComponent(r.url.split('?')[0]!.replace(/^\/shelf\/registry\//, '')));
}

t.test('503 SlowDown, 429 and a reset mid-upload are retried', async (t) => {
  const fake = await startS3(t);
  const { s, settings } = await setUp(t, fake);
  const attempts = new Map<string, number>();
  fake.fault = (req) => {
    if (req.method !== 'PUT') return undefined;
    const n = (attempts.get(req.url) ?? 0) + 1;
    attempts.set(req.url, n);
    if (req.url.endsWith('/v1/brands/acme.json') && n <= 2)
      return { status: 503, code: 'SlowDown' };
    if (req.url.endsWith('/v1/feeds/bolts/products.ndjson') && n === 1)
      return { status: 429, code: 'TooManyRequests', retryAfter: '0' };
    if (req.url.endsWith('/v1/feeds/cogs/products.json') && n === 1) return 'reset';
    return undefined;
  };
  const retries: string[] = [];
  const report = await syncTree({
    ...settings,
    client: { backoffMs: 1, onRetry: (r) => retries.push(r.reason) },
  });
  t.equal(retries.length, 4, retries.join('; '));
  t.match(retries.join('\n'), /HTTP 503[\s\S]*HTTP 429|HTTP 429[\s\S]*HTTP 503/);
  t.equal(report.uploaded, report.changed.length);
  for (const key of [
    'v1/brands/acme.json',
    'v1/feeds/bolts/products.ndjson',
    'v1/feeds/cogs/products.json',
  ])
    t.same(
      (await fake.get(`registry/${key}`))?.body,
      fs.readFileSync(path.join(s.config.PUBLIC_DIR, key)),
      key,
    );
});

t.test(
  'a brand object that keeps failing: the index is not uploaded, the next run completes',
  async (t) => {
    const fake = await startS3(t);
    const { settings } = await setUp(t, fake);
    fake.fault = (req) =>
      req.method === 'PUT' && req.url.includes('/v1/feeds/bolts/')
        ? { status: 503, code: 'SlowDown' }
        : undefined;
    await t.rejects(syncTree(settings), /503 SlowDown/);
    t.same(keysOf(fake, 'PUT', '/v1/index.json'), [], 'index.json never sent');
    t.equal(await fake.get('registry/v1/index.json'), undefined);

    fake.fault = undefined;
    fake.requests.length = 0;
    const report = await syncTree(settings);
    const sent = keysOf(fake, 'PUT');
    t.ok(sent.includes('v1/feeds/bolts/products.json'), 'what failed is uploaded');
    // The first object of the first step went up before the failure stopped the step.
    t.notOk(sent.includes('v1/feeds/acme/products.json.br'), 'what was uploaded is not sent again');
    t.ok(sent.includes('v1/brands/acme.json'), 'the step after the failed one is uploaded now');
    t.equal(sent.at(-1), 'index.html');
    t.equal(report.uploaded, sent.length);
  },
);

t.test('ETags that are not MD5s: compared by size, then by the stored SHA-256', async (t) => {
  const fake = await startS3(t);
  const { s, settings } = await setUp(t, fake);
  const first = await syncTree(settings);
  // A multipart-style ETag on every object of the listing.
  fake.listingEtag = () => '"0123456789abcdef0123456789abcdef-2"';
  fake.requests.length = 0;
  const again = await syncTree(settings);
  t.same([again.uploaded, again.skipped], [0, first.uploaded], 'nothing uploaded');
  t.equal(keysOf(fake, 'HEAD').length, first.uploaded, 'one HEAD an object, for its sha256');

  // Same size, other bytes: the SHA-256 tells.
  const file = path.join(s.config.PUBLIC_DIR, 'v1/brands/acme.json');
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.replace('"Acme"', '"ACME"'));
  fake.requests.length = 0;
  const edited = await syncTree(settings);
  t.same(edited.changed, ['v1/brands/acme', 'v1/brands/acme.json']);
  t.same((await fake.get('registry/v1/brands/acme.json'))?.body, fs.readFileSync(file));
});

t.test(
  'deletions: after the grace, within the limit or with force, never index.json',
  async (t) => {
    const fake = await startS3(t);
    const { s, settings } = await setUp(t, fake);
    const clock = createClock();
    await syncTree(settings, { now: clock.now });

    // Cogs has no active product left: its files go from the tree, its objects become orphans.
    await updateProduct(s.db, 'c1', { status: 'inactive' });
    await publishLocally(t, s);
    const first = await syncTree(settings, { now: clock.now });
    t.ok(first.orphans.length >= 4, `orphans: ${first.orphans.join(', ')}`);
    t.ok(first.orphans.every((k) => k.includes('cogs')));
    t.same([first.deleted, first.pending], [0, first.orphans.length], 'within the grace');
    const index = JSON.parse(String((await fake.get('registry/v1/index.json'))?.body));
    t.same(
      index.brands.map((b: { slug: string }) => b.slug),
      ['acme', 'bolts'],
      'the index stops naming the brand first',
    );
    t.ok(await fake.get('registry/v1/brands/cogs.json'), 'its objects stay meanwhile');

    clock.advance(3599);
    t.equal((await syncTree(settings, { now: clock.now })).deleted, 0);
    clock.advance(1);
    const limited = await syncTree({ ...settings, maxDeletes: 2 }, { now: clock.now });
    t.same([limited.deleted, limited.held], [0, first.orphans.length], 'over the limit: held');
    t.same(keysOf(fake, 'POST'), [], 'no DeleteObjects call');
    const forced = await syncTree({ ...settings, maxDeletes: 2 }, { now: clock.now, force: true });
    t.equal(forced.deleted, first.orphans.length);
    t.equal(keysOf(fake, 'POST').length, 1, 'one DeleteObjects call');
    t.equal(await fake.get('registry/v1/brands/cogs.json'), undefined);
    t.equal(await fake.get('registry/v1/feeds/cogs/products.ndjson'), undefined);

    // index.json gone from the tree (removed by hand): never deleted from the bucket.
    fs.rmSync(path.join(s.config.PUBLIC_DIR, 'v1/index.json'));
    const noIndex = await syncTree(
      { ...settings, deleteGraceSeconds: 0 },
      { now: clock.now, force: true },
    );
    t.ok(noIndex.orphans.includes('v1/index.json'));
    t.ok(await fake.get('registry/v1/index.json'), 'index.json stays');
  },
);

t.test('SIGKILL mid-publish: the bucket index names only objects that exist', async (t) => {
  const fake = await startS3(t);
  const { s, settings } = await setUp(t, fake);
  await syncTree(settings);
  await addProduct(s.db, { id: 'z1', name: 'Zeta thing', attributes: { brand: 'Zeta' } });

  // The child's upload of the new brand's feed hangs; we kill it there.
  let held: () => void = () => {};
  const holding = new Promise<void>((resolve) => (held = resolve));
  fake.fault = (req) => {
    if (req.method === 'PUT' && req.url.includes('/v1/feeds/zeta/')) {
      held();
      return 'hold';
    }
    return undefined;
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...s3Env(fake),
    ...(await testStoreEnv(s.dir, { fresh: false })),
    DATA_DIR: s.config.DATA_DIR,
    PUBLIC_DIR: s.config.PUBLIC_DIR,
    FEEDS_URL: s.config.FEEDS_URL,
    LOG_LEVEL: 'silent',
  };
  const child = spawn(process.execPath, [MAIN, 'build'], { env, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await Promise.race([
    holding,
    exited.then(() => {
      throw new Error('the build ended before its upload of the new brand');
    }),
  ]);
  child.kill('SIGKILL');
  await exited;
  await checkIndex(t, fake, ['acme', 'bolts', 'cogs']);

  fake.fault = undefined;
  await syncTree(settings);
  await checkIndex(t, fake, ['acme', 'bolts', 'cogs', 'zeta']);
});

/** The bucket's index names these brands, and every object it names is in the bucket. */
async function checkIndex(t: Test, fake: S3Fake, slugs: string[]) {
  const index = JSON.parse(String((await fake.get('registry/v1/index.json'))?.body)) as {
    brands: {
      slug: string;
      url: string;
      html_url: string;
      feeds: { json: string; ndjson: string };
    }[];
  };
  t.same(
    index.brands.map((b) => b.slug),
    slugs,
  );
  for (const b of index.brands) {
    for (const url of [b.url, b.html_url, b.feeds.json, b.feeds.ndjson]) {
      let key = new URL(url).pathname.slice(1);
      if (key.endsWith('/')) key += 'index.html';
      t.ok(await fake.get(`registry/${key}`), `${key} exists`);
    }
  }
}
