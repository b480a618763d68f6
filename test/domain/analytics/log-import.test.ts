import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import type { AccessRecord } from '../../../src/domain/analytics/access-record.js';
import {
  createParser,
  detectFormat,
  parseEdgeTimestamp,
  parseTimeLocal,
  unescapeNginx,
} from '../../../src/domain/analytics/log-formats.js';
import {
  importLogs,
  MAX_LINE,
  StoreError,
  type AccessSink,
} from '../../../src/domain/analytics/log-import.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../../test/fixtures/logs');
const NGINX = path.join(FIXTURES, 'nginx-combined.log');
const CLOUDFLARE = path.join(FIXTURES, 'cloudflare-http-requests.ndjson');
const CLOUDFLARE_GZ = path.join(FIXTURES, 'cloudflare-http-requests.ndjson.gz');
const CLOUDFRONT = path.join(FIXTURES, 'cloudfront-E2EXAMPLE.2026-11-24-10.a1b2c3d4.gz');

/** The discovery tree as the CLI passes it: /v1/... files and directory pages. */
const inTree = (p: string) =>
  /^\/v1\/(index\.json|brands\/[a-z0-9-]+(\.json|\/)?|feeds\/[a-z0-9-]+\/products\.(json|ndjson))$/.test(
    p,
  );

/** Keeps what it is given, once per dedupe key, as a store would. */
function memorySink() {
  const rows = new Map<string, AccessRecord>();
  const calls: number[] = [];
  const sink: AccessSink = async (records) => {
    calls.push(records.length);
    let stored = 0;
    for (const r of records) {
      if (rows.has(r.dedupeKey!)) continue;
      rows.set(r.dedupeKey!, r);
      stored++;
    }
    return { stored, duplicates: records.length - stored };
  };
  return { rows, calls, sink };
}

t.test('nginx combined: records, skipped paths and bad lines with their numbers', async (t) => {
  const m = memorySink();
  const s = await importLogs([NGINX], { sink: m.sink, isDiscoveryPath: inTree });
  t.match(s.files[0], { format: 'nginx', gzip: false, lines: 12, imported: 6, skipped: 2, bad: 3 });
  t.same(
    s.bad_lines.map((b) => b.line),
    [5, 6, 9],
  );
  t.match(s.bad_lines[1]!.reason, /time: '24\/Foo\/2026:10:16:10 \+0000'/);
  const records = [...m.rows.values()];
  t.same(
    records.map((r) => [r.at.toISOString(), r.method, r.path, r.status, r.bytes]),
    [
      ['2026-11-24T10:15:32.000Z', 'GET', '/v1/index.json', 200, 5123],
      ['2026-11-24T10:15:33.000Z', 'GET', '/v1/feeds/acme/products.json', 200, 88211],
      ['2026-11-24T10:16:00.000Z', 'GET', '/v1/brands/acme', 304, 0],
      ['2026-11-24T10:17:00.000Z', 'GET', '/v1/brands/acme/', 200, 4410],
      ['2026-11-24T10:20:00.000Z', 'HEAD', '/v1/feeds/acme/products.ndjson', 200, 0],
      ['2026-11-24T10:21:00.000Z', 'GET', '/v1/index.json', 200, 5123],
    ],
  );
  t.equal(
    records[3]!.userAgent,
    'Mozilla/5.0 (compatible; "quoted" ClaudeBot/1.0; +claudebot@anthropic.com)',
  );
  t.ok(records.every((r) => r.source === 'nginx' && /^nginx:[\w-]{32}$/.test(r.dedupeKey!)));
});

t.test('Cloudflare Logpush: the three timestamp encodings, plain and gzipped', async (t) => {
  const m = memorySink();
  const s = await importLogs([CLOUDFLARE, CLOUDFLARE_GZ], {
    sink: m.sink,
    isDiscoveryPath: inTree,
  });
  t.match(s.files[0], {
    format: 'cloudflare',
    gzip: false,
    lines: 9,
    imported: 5,
    skipped: 1,
    bad: 3,
  });
  // The gzipped copy holds the same requests: every one is a duplicate.
  t.match(s.files[1], { format: 'cloudflare', gzip: true, lines: 9, imported: 0, duplicates: 5 });
  t.same(
    s.bad_lines.map((b) => [path.basename(b.file), b.line]),
    [
      ['cloudflare-http-requests.ndjson', 6],
      ['cloudflare-http-requests.ndjson', 7],
      ['cloudflare-http-requests.ndjson', 8],
      ['cloudflare-http-requests.ndjson.gz', 6],
      ['cloudflare-http-requests.ndjson.gz', 7],
      ['cloudflare-http-requests.ndjson.gz', 8],
    ],
  );
  t.match(s.bad_lines[0]!.reason, /EdgeStartTimestamp/);
  t.match(s.bad_lines[1]!.reason, /not a JSON object/);
  t.match(s.bad_lines[2]!.reason, /EdgeResponseStatus/);
  const byRay = Object.fromEntries(
    [...m.rows.values()].map((r) => [r.dedupeKey!.replace(/^cloudflare:/, ''), r]),
  );
  t.equal(byRay['8e7a1c2b3d4e5f60']!.at.toISOString(), '2026-11-24T10:15:32.000Z', 'RFC 3339');
  t.equal(byRay['8e7a1c2b3d4e5f61']!.at.toISOString(), '2026-11-24T10:15:33.000Z', 'unix seconds');
  t.equal(
    byRay['8e7a1c2b3d4e5f62']!.at.toISOString(),
    '2026-11-24T10:15:34.123Z',
    'unix nanoseconds',
  );
  t.equal(
    byRay['8e7a1c2b3d4e5f63']!.at.toISOString(),
    '2026-11-24T10:15:35.000Z',
    'RFC 3339 with offset',
  );
  t.equal(byRay['8e7a1c2b3d4e5f63']!.path, '/v1/index.json', 'ClientRequestURI without its query');
  t.equal(byRay['8e7a1c2b3d4e5f68']!.signatureAgent, '"https://chatgpt.com"');
  t.equal(byRay['8e7a1c2b3d4e5f68']!.at.toISOString(), '2026-11-24T10:15:40.000Z');
  t.same(s.by_format.cloudflare, { files: 2, lines: 18, imported: 5 });
});

t.test('CloudFront W3C, gzipped: #Fields, URL-encoded user agents, a duplicate', async (t) => {
  const m = memorySink();
  const s = await importLogs([CLOUDFRONT], {
    sink: m.sink,
    isDiscoveryPath: inTree,
    host: 'FEEDS.example.com',
  });
  t.match(s.files[0], {
    format: 'cloudfront',
    gzip: true,
    lines: 10,
    imported: 5,
    duplicates: 1,
    skipped: 1,
    bad: 1,
  });
  t.same(s.bad_lines, [{ file: CLOUDFRONT, line: 8, reason: '6 fields where #Fields: names 33' }]);
  const records = [...m.rows.values()];
  t.same(records[0], {
    at: new Date('2026-11-24T10:15:32Z'),
    method: 'GET',
    path: '/v1/index.json',
    status: 200,
    bytes: 5123,
    userAgent:
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
    signatureAgent: null,
    dedupeKey: 'cloudfront:SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==',
    source: 'cloudfront',
  });
  t.match(records[4]!.dedupeKey, /^cloudfront:[\w-]{32}$/, 'no request id: a hash of the line');

  const other = memorySink();
  const s2 = await importLogs([CLOUDFRONT], {
    sink: other.sink,
    isDiscoveryPath: inTree,
    host: 'shop.example.com',
  });
  t.match(s2, { imported: 0, skipped: 7 }, 'requests for another host are skipped');
});

t.test('batches are at most batchSize; progress is reported', async (t) => {
  const m = memorySink();
  const seen: number[] = [];
  await importLogs([NGINX], {
    sink: m.sink,
    isDiscoveryPath: inTree,
    batchSize: 4,
    onProgress: (n) => seen.push(n),
  });
  t.same(m.calls, [4, 2]);
  t.same(seen, [12]);
});

t.test(
  'a file of another format, a missing file, a damaged gzip: reported, the rest imported',
  async (t) => {
    const dir = t.testdir({ 'notes.txt': 'hello\nworld\n', 'empty.log': '' });
    const broken = path.join(dir, 'broken.ndjson.gz');
    const whole = zlib.gzipSync(fs.readFileSync(CLOUDFLARE));
    fs.writeFileSync(broken, whole.subarray(0, whole.length - 200));
    const m = memorySink();
    const s = await importLogs(
      [
        path.join(dir, 'notes.txt'),
        path.join(dir, 'missing.log'),
        broken,
        path.join(dir, 'empty.log'),
        NGINX,
      ],
      { sink: m.sink, isDiscoveryPath: inTree },
    );
    t.match(s.files[0], { format: null, error: /not a log format/ });
    t.match(s.files[1], { error: /cannot be read: ENOENT/ });
    t.match(s.files[2], { format: 'cloudflare', error: /gzip data is damaged/ });
    t.match(s.files[3], { format: null, lines: 0 });
    t.notOk(s.files[3]!.error);
    t.match(s.files[4], { format: 'nginx', imported: 6 });
  },
);

t.test('a line too long to be a log line is bad, and not held in memory', async (t) => {
  const nginx = fs.readFileSync(NGINX, 'utf8').split('\n');
  const dir = t.testdir({
    'long.log': [
      nginx[0],
      'x'.repeat(MAX_LINE * 3),
      nginx[1],
      `${'y'.repeat(MAX_LINE + 1)}`,
      nginx[2],
      '',
    ].join('\n'),
  });
  const m = memorySink();
  const s = await importLogs([path.join(dir, 'long.log')], {
    sink: m.sink,
    isDiscoveryPath: inTree,
  });
  t.match(s.files[0], { format: 'nginx', lines: 5, imported: 3, bad: 2 });
  t.same(
    s.bad_lines.map((b) => [b.line, b.reason]),
    [
      [2, `longer than ${MAX_LINE} bytes`],
      [4, `longer than ${MAX_LINE} bytes`],
    ],
  );
});

t.test('a store that refuses a batch stops the import with the file and line', async (t) => {
  let calls = 0;
  const failing: AccessSink = async (records) => {
    if (++calls === 2) throw new Error('SQLITE_FULL: database or disk is full');
    return { stored: records.length, duplicates: 0 };
  };
  const err = await importLogs([NGINX], {
    sink: failing,
    isDiscoveryPath: inTree,
    batchSize: 2,
  }).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(err, StoreError);
  t.match(
    (err as Error).message,
    /nginx-combined\.log: the store refused a batch near line \d+: SQLITE_FULL/,
  );
});

t.test('detection and field parsers', async (t) => {
  t.equal(detectFormat('#Version: 1.0'), 'cloudfront');
  t.equal(detectFormat('{"RayID":"x"}'), 'cloudflare');
  t.equal(detectFormat(fs.readFileSync(NGINX, 'utf8').split('\n')[0]!), 'nginx');
  t.equal(detectFormat('2026-11-24 10:00:00 something'), null);
  t.equal(parseTimeLocal('01/Jan/2026:00:30:00 +0100')!.toISOString(), '2025-12-31T23:30:00.000Z');
  t.equal(parseTimeLocal('32/Jan/2026:00:30:00 +0100'), null);
  t.equal(parseEdgeTimestamp(1795515332)!.toISOString(), '2026-11-24T10:15:32.000Z');
  t.equal(parseEdgeTimestamp(1795515332000)!.toISOString(), '2026-11-24T10:15:32.000Z');
  t.equal(parseEdgeTimestamp('1795515332500000000')!.toISOString(), '2026-11-24T10:15:32.500Z');
  t.equal(parseEdgeTimestamp('2026-11-24T10:15:32.25Z')!.toISOString(), '2026-11-24T10:15:32.250Z');
  t.equal(parseEdgeTimestamp('2026-11-24'), null);
  t.equal(parseEdgeTimestamp(-1), null);
  t.equal(parseEdgeTimestamp(null), null);
  const absolute = createParser('nginx').parse(
    '192.0.2.1 - - [24/Nov/2026:10:00:00 +0000] "GET http://feeds.example.com/v1/index.json?x HTTP/1.1" 200 5 "-" "-"',
  );
  t.match(absolute, { record: { path: '/v1/index.json', userAgent: null } });
  t.equal(unescapeNginx('caf\\xC3\\xA9 \\x22x\\x22'), 'café "x"');
});
