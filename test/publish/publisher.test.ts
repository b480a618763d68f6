import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import t from 'tap';
import { FsPublisher, temporaryWriter } from '../../src/publish/fs.js';
import { MemoryPublisher } from '../../src/publish/memory.js';
import type { Publisher } from '../../src/publish/publisher.js';
import { createFeed } from '../../src/domain/feeds/feeds.js';
import { feedsStage } from '../../pipeline/feeds-stage.js';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { addProduct } from '../support/discovery.js';
import { createClock, createPipelineContext, startTestStore } from '../support/pipeline.js';

/** Every file under a directory (temporaries and compressed siblings left out), by key. */
function treeOf(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string, prefix: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const key = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), key);
      else if (!/\.(gz|br)$/.test(e.name) && temporaryWriter(e.name) === undefined)
        out.set(key, fs.readFileSync(path.join(dir, e.name)));
    }
  };
  walk(root, '');
  return out;
}

const implementations: [string, (dir: string) => Publisher][] = [
  ['FsPublisher', (dir) => new FsPublisher(dir)],
  [
    'FsPublisher, each file from its own thread',
    (dir) => new FsPublisher(dir, { offThread: true }),
  ],
  ['MemoryPublisher', () => new MemoryPublisher()],
];

for (const [name, make] of implementations) {
  t.test(`${name}: the Publisher contract`, async (t) => {
    const p = make(t.testdir({}));
    const file = p.open('v1/feeds/a/products.ndjson', { contentType: 'application/x-ndjson' });
    await file.write('{"a":1}\n');
    await file.write(Buffer.from('{"b":2}\n'));
    t.notOk(await p.exists('v1/feeds/a/products.ndjson'), 'nothing is visible before commit');
    const first = await file.commit();
    t.same(
      { changed: first.changed, bytes: first.bytes, path: first.path },
      { changed: true, bytes: 16, path: 'v1/feeds/a/products.ndjson' },
    );
    t.match(first.sha256, /^[0-9a-f]{64}$/);
    t.equal(String(await p.read('v1/feeds/a/products.ndjson')), '{"a":1}\n{"b":2}\n');
    await t.rejects(file.commit(), /already committed/, 'a file commits once');

    // The same content again: nothing replaced, nothing listed.
    const again = await p.write('v1/feeds/a/products.ndjson', '{"a":1}\n{"b":2}\n');
    t.equal(again.changed, false);
    t.equal(again.sha256, first.sha256);

    // A stream of chunks; an aborted file leaves the published one as it was.
    async function* chunks() {
      yield 'x,';
      yield Buffer.from('y\n');
    }
    await p.write('v1/brands/b.json', chunks(), { gzip: false });
    const dropped = p.open('v1/brands/b.json');
    await dropped.write('half');
    await dropped.abort();
    t.equal(String(await p.read('v1/brands/b.json')), 'x,y\n', 'an abort keeps what was published');
    await p.write('v1/brands/b/index.html', '<p>b</p>');
    t.same((await p.list('v1/brands')).sort(), ['b.json'], 'list: the files directly under');
    t.same(await p.list('nowhere'), []);
    t.same(await p.commit(), {
      written: ['v1/feeds/a/products.ndjson', 'v1/brands/b.json', 'v1/brands/b/index.html'],
      removed: [],
    });

    await p.remove('v1/brands/b.json');
    await p.remove('v1/brands/b', { recursive: true });
    await p.remove('v1/never-there.json');
    t.notOk(await p.exists('v1/brands/b.json'));
    t.notOk(await p.exists('v1/brands/b/index.html'));
    t.equal(await p.read('v1/brands/b.json'), undefined);
    t.same(await p.commit(), {
      written: [],
      removed: ['v1/brands/b.json', 'v1/brands/b/index.html'],
    });
    t.same(await p.commit(), { written: [], removed: [] }, 'a commit lists its own batch');
  });
}

t.test('FsPublisher: temporary, siblings, durability and the root', async (t) => {
  const root = t.testdir({});
  const p = new FsPublisher(root);
  const file = p.open('feed.json', { gzipLevel: 1, brotli: true, durable: true });
  await file.write('[1,2,3]');
  t.notOk(fs.existsSync(path.join(root, 'feed.json')), 'no file under its name before commit');
  await file.commit();
  t.same(fs.readdirSync(root).sort(), ['feed.json', 'feed.json.br', 'feed.json.gz']);
  t.equal(zlib.gunzipSync(fs.readFileSync(path.join(root, 'feed.json.gz'))).toString(), '[1,2,3]');
  t.equal(
    zlib.brotliDecompressSync(fs.readFileSync(path.join(root, 'feed.json.br'))).toString(),
    '[1,2,3]',
  );
  await p.remove('feed.json');
  t.same(fs.readdirSync(root), [], 'a removal takes the siblings');
  t.same((await p.commit()).removed, ['feed.json'], 'the batch names the file');
  t.throws(() => p.open('../outside.json'), /outside/, 'a key cannot leave the root');
  t.throws(() => p.open('/etc/passwd'), /outside/);
});

for (const offThread of [false, true]) {
  t.test(
    `FsPublisher: writes of any size and text give the bytes Buffer.from gives, and their hash (${offThread ? 'each file from its own thread' : 'inline'})`,
    async (t) => {
      const root = t.testdir({});
      const p = new FsPublisher(root, { offThread });
      // Pieces around the 1 MiB the file gathers before a write: text with multi-byte and lone
      // surrogate characters (a split would change them), and Buffers small and large.
      const text = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 64 }),
        fc.string({ unit: 'grapheme', maxLength: 16 }),
        fc
          .tuple(
            fc.integer({ min: 1, max: 1_200_000 }),
            fc.constantFrom('a', 'é', '\u{1F600}', '\uD800'),
          )
          .map(([n, c]) => c.repeat(Math.ceil(n / c.length))),
      );
      const chunk = fc.oneof(
        { weight: 3, arbitrary: text },
        { weight: 1, arbitrary: text.map((s) => Buffer.from(s)) },
      );
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(chunk, { maxLength: 8 }), async (chunks) => {
          const name = `f${run++}.txt`;
          const file = p.open(name, { gzipLevel: 1 });
          for (const c of chunks) await file.write(c);
          const result = await file.commit();
          const expected = Buffer.concat(
            chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)),
          );
          const written = fs.readFileSync(path.join(root, name));
          t.equal(Buffer.compare(written, expected), 0, 'the bytes');
          t.equal(result.bytes, expected.length);
          t.equal(result.sha256, createHash('sha256').update(expected).digest('hex'));
          t.equal(
            Buffer.compare(
              zlib.gunzipSync(fs.readFileSync(path.join(root, `${name}.gz`))),
              expected,
            ),
            0,
          );
        }),
        { numRuns: 40, seed: 22 },
      );
    },
  );
}

t.test(
  'FsPublisher, a file from its own thread: 24 MiB of distinct pieces come out whole while its buffers go round',
  async (t) => {
    const root = t.testdir({});
    const p = new FsPublisher(root, { offThread: true });
    const file = p.open('big.jsonl', { gzipLevel: 1 });
    const expected: Buffer[] = [];
    // 384 pieces of 64 KiB, each its number over and over: a buffer gathered into again before
    // the streams were done with it would put one piece's bytes where another's belong.
    for (let i = 0; i < 384; i++) {
      const piece = `${String(i).padStart(7, '0')}\n`.repeat(8192);
      expected.push(Buffer.from(piece));
      const wait = file.write(piece);
      if (wait) await wait;
    }
    const result = await file.commit();
    const whole = Buffer.concat(expected);
    t.equal(result.bytes, whole.length);
    t.equal(result.sha256, createHash('sha256').update(whole).digest('hex'));
    t.equal(Buffer.compare(fs.readFileSync(path.join(root, 'big.jsonl')), whole), 0, 'the file');
    t.equal(
      Buffer.compare(zlib.gunzipSync(fs.readFileSync(path.join(root, 'big.jsonl.gz'))), whole),
      0,
      'its gzip',
    );
  },
);

t.test(
  'FsPublisher, a file from its own thread: a file whose directory cannot be made fails its commit with the cause, and nothing is left',
  async (t) => {
    const root = t.testdir({ blocker: 'a file where a directory should be' });
    const p = new FsPublisher(root, { offThread: true });
    // Inline, open() throws; the thread fails as it starts, and the file says so when asked.
    const file = p.open('blocker/feed.jsonl');
    await t.rejects(
      (async () => {
        await file.write('{"a":1}\n');
        await file.commit();
      })(),
      { code: /^(EEXIST|ENOTDIR)$/, message: /mkdir/ },
    );
    await file.abort();
    t.same(fs.readdirSync(root), ['blocker'], 'no temporary anywhere');
    t.equal(
      fs.readFileSync(path.join(root, 'blocker'), 'utf8'),
      'a file where a directory should be',
    );
  },
);

t.test('MemoryPublisher keeps the content type a target needs', async (t) => {
  const p = new MemoryPublisher();
  await p.write('index.html', '<p>x</p>', { contentType: 'text/html; charset=utf-8' });
  t.equal(p.files.get('index.html')?.contentType, 'text/html; charset=utf-8');
});

t.test('the feeds and discovery stages publish the same bytes to memory as to disk', async (t) => {
  const s = await startTestStore(t);
  const clock = createClock();
  await addProduct(s.db, { id: 'a1', name: 'Lamp <b>', attributes: { brand: 'Acme & Co' } });
  await addProduct(s.db, { id: 'a2', name: 'Desk', attributes: { brand: 'Other' } });
  await addProduct(s.db, { id: 'a3', name: 'Chair' });
  const options = { baseUrl: 'https://api.example.com', startDelayMs: 0 };
  await createFeed(s.db, { name: 'All', format: 'json' }, options, clock.now());
  await createFeed(s.db, { name: 'CSV', format: 'csv' }, options, clock.now());

  const memory = { feeds: new MemoryPublisher(), discovery: new MemoryPublisher() };
  const inMemory = { ...createPipelineContext(t, s.store, s.config, clock), output: memory };
  t.same((await feedsStage(inMemory)).failures, []);
  t.same((await publishDiscovery(inMemory)).failures, []);
  t.notOk(fs.existsSync(s.config.PUBLIC_DIR), 'nothing of the registry went to the disk');

  // The same runs again from a fresh state, onto the disk.
  await s.db.deleteFrom('discovery_brands').execute();
  const onDisk = createPipelineContext(t, s.store, s.config, clock);
  await feedsStage(onDisk);
  await publishDiscovery(onDisk);

  for (const [label, publisher, root] of [
    ['feeds', memory.feeds, path.join(s.config.DATA_DIR, 'feeds')],
    ['discovery', memory.discovery, s.config.PUBLIC_DIR],
  ] as const) {
    const disk = treeOf(root);
    const keys = [...publisher.files.keys()].filter((k) => k !== '.published').sort();
    t.same(keys, [...disk.keys()].filter((k) => k !== '.published').sort(), `${label}: same files`);
    t.ok(keys.length >= 2, `${label}: files were published (${keys.length})`);
    for (const k of keys) {
      if (k === 'v1/index.json') continue; // stamped with the time its content last changed
      t.ok(publisher.files.get(k)!.content.equals(disk.get(k)!), `${label}: ${k}`);
    }
  }
  t.equal(memory.discovery.files.get('index.html')?.contentType, 'text/html; charset=utf-8');
});
