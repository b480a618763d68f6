// stores: sqlite-only — no store is opened: the sync reads the tree on disk and the bucket,
// and DATA_DIR holds only its manifest.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { objectStorageSettings } from '../../pipeline/object-storage.js';
import { loadConfig } from '../../src/config.js';
import { MAX_PARTS, MIN_PART_SIZE, partSizeFor } from '../../src/publish/s3-client.js';
import { syncTree } from '../../src/publish/s3.js';
import { s3Env, startS3, type S3Fake } from '../support/s3.js';

// Objects above PUBLISH_MULTIPART_THRESHOLD go up in parts (CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload), against s3rver, which verifies the signature of every call. The
// threshold and the part size are lowered to S3's least part (5 MiB), so a 12 MiB object is
// three parts. No store: the sync reads the tree on disk and the bucket.

const MIB = 1024 * 1024;
const FEED = 'v1/feeds/big/products.ndjson';

/** `bytes` deterministic bytes that do not compress (xorshift32 from `seed`). */
function noise(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i + 4 <= bytes; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  return out;
}

function setUp(t: Test, fake: S3Fake) {
  const dir = t.testdir({});
  const config = loadConfig(
    s3Env(fake, {
      DATA_DIR: path.join(dir, 'data'),
      PUBLIC_DIR: path.join(dir, 'public'),
      PUBLISH_MULTIPART_THRESHOLD: String(5 * MIB),
      PUBLISH_PART_SIZE: String(5 * MIB),
    }),
  );
  const write = (key: string, body: Buffer | string) => {
    const file = path.join(config.PUBLIC_DIR, key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, body);
  };
  const settings = { ...objectStorageSettings(config)!, client: { backoffMs: 1 } };
  return { settings, write };
}

/** The requests of a multipart upload of `key`, by kind. */
function multipartCalls(fake: S3Fake, key: string) {
  const of = (method: string, query: RegExp) =>
    fake.requests.filter(
      (r) =>
        r.method === method && r.url.startsWith(`/shelf/registry/${key}?`) && query.test(r.url),
    );
  return {
    created: of('POST', /\?uploads$/).length,
    parts: of('PUT', /[?&]partNumber=\d+/)
      .map((r) => Number(/partNumber=(\d+)/.exec(r.url)![1]))
      .sort((a, b) => a - b),
    completed: of('POST', /\?uploadId=/).length,
    aborted: of('DELETE', /\?uploadId=/).length,
  };
}

t.test('an object above the threshold goes up in parts, with its metadata', async (t) => {
  const fake = await startS3(t);
  const { settings, write } = setUp(t, fake);
  const big = noise(12 * MIB + 3, 7);
  write(FEED, big);
  write('v1/index.json', '{"brands":[]}\n');

  const report = await syncTree(settings);
  t.equal(report.uploaded, 2);
  t.same(multipartCalls(fake, FEED), { created: 1, parts: [1, 2, 3], completed: 1, aborted: 0 });
  t.notOk(
    fake.requests.some((r) => r.url.startsWith('/shelf/registry/v1/index.json?')),
    'a small object is one PUT',
  );
  const stored = await fake.get(`registry/${FEED}`);
  t.ok(stored?.body.equals(big), 'the bucket holds the bytes, in order');
  t.equal(stored?.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
  t.equal(stored?.headers.get('x-amz-meta-sha256'), createHash('sha256').update(big).digest('hex'));
  t.match(stored?.headers.get('cache-control'), /stale-if-error=86400/);

  // A multipart ETag is not an MD5 (on S3 it is "md5-of-parts-3"): the size, then the SHA-256.
  fake.listingEtag = () => '"0123456789abcdef0123456789abcdef-3"';
  fake.requests.length = 0;
  const again = await syncTree(settings);
  t.equal(again.uploaded, 0, 'nothing uploaded again');
  t.same(multipartCalls(fake, FEED).parts, []);
});

t.test(
  'a part that fails: the upload is aborted, the old object stays, the next run completes',
  async (t) => {
    const fake = await startS3(t);
    const { settings, write } = setUp(t, fake);
    const first = noise(11 * MIB, 1);
    write(FEED, first);
    await syncTree(settings);

    const second = noise(11 * MIB, 2);
    write(FEED, second);
    fake.requests.length = 0;
    fake.fault = (req) =>
      req.method === 'PUT' && /[?&]partNumber=2&/.test(req.url)
        ? { status: 403, code: 'AccessDenied' }
        : undefined;
    await t.rejects(syncTree(settings), {
      message: /uploading part 2 of v1\/feeds\/big\/products\.ndjson: 403 AccessDenied/,
    });
    const calls = multipartCalls(fake, FEED);
    t.same([calls.parts, calls.completed, calls.aborted], [[1, 2], 0, 1], 'aborted after part 2');
    t.ok((await fake.get(`registry/${FEED}`))?.body.equals(first), 'the old object is whole');

    fake.fault = undefined;
    fake.requests.length = 0;
    const report = await syncTree(settings);
    t.same(report.changed, [FEED]);
    t.ok((await fake.get(`registry/${FEED}`))?.body.equals(second), 'the new object is in place');
  },
);

t.test('part sizes: at least 5 MiB, and never more than 10,000 parts', async (t) => {
  t.equal(partSizeFor(12 * MIB, 16 * MIB), 16 * MIB);
  t.equal(partSizeFor(12 * MIB, 1), MIN_PART_SIZE);
  for (const size of [5 * 1024 ** 3, 100 * 1024 ** 3, 5 * 1024 ** 4]) {
    const part = partSizeFor(size, 16 * MIB);
    t.ok(Math.ceil(size / part) <= MAX_PARTS, `${size} bytes in ${Math.ceil(size / part)} parts`);
    t.equal(part % MIN_PART_SIZE === 0 || part === 16 * MIB, true);
  }
  for (const name of ['PUBLISH_MULTIPART_THRESHOLD', 'PUBLISH_PART_SIZE'])
    t.throws(() => loadConfig({ [name]: '1000' }), { message: new RegExp(`^${name}: .*5242880`) });
});
