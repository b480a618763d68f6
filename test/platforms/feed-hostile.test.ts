import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { feedSource } from '../../src/platforms/feed.js';
import { DelimitedRecordGuard } from '../../src/platforms/feed-formats.js';
import type { SourceItem } from '../../src/domain/integrations/source.js';
import { startFeedServer } from '../support/feed-server.js';
import { collect, sourceHarness } from '../support/source-context.js';

/**
 * Hostile feeds (CONTRACT part 8): a feed cut short fails the read in every format; JSON
 * nested too deep, a field over 1 MB and a line of hundreds of MB are refused alone, without
 * the memory they would take; the event loop stays free while they are read.
 */

/** Every item of a read of the feed with these settings. */
function collectFeed(settings: Record<string, unknown>): Promise<SourceItem[]> {
  return collect(feedSource, sourceHarness({ shopDomain: '127.0.0.1', settings }).ctx);
}

const ids = (items: SourceItem[]) =>
  items.map((i) =>
    i.kind === 'product' ? i.externalId : i.kind === 'error' ? `error: ${i.reason}` : i.kind,
  );

const CSV_HEAD = 'id,title,price,link,availability\n';
const csvRow = (id: string, title = `Product ${id}`) =>
  `${id},"${title}",19.99 USD,https://shop.example.com/p/${id},in_stock\n`;
const object = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  title: `Product ${id}`,
  price: '19.99 USD',
  link: `https://shop.example.com/p/${id}`,
  availability: 'in_stock',
  ...extra,
});
const xmlItem = (id: string, extra = '') =>
  `<item><g:id>${id}</g:id><g:title>Product ${id}</g:title><g:price>19.99 USD</g:price>` +
  `<g:link>https://shop.example.com/p/${id}</g:link><g:availability>in_stock</g:availability>${extra}</item>`;
const XML_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>Shop</title>\n';
const XML_TAIL = '</channel></rss>\n';

t.test('a feed cut short fails the read, in every format, naming what was cut', async (t) => {
  const server = await startFeedServer(t);
  const gzipped = gzipSync(CSV_HEAD + csvRow('A') + csvRow('B'));
  const cases: [string, string | Buffer, RegExp][] = [
    [
      '/quote.csv',
      CSV_HEAD + csvRow('A') + 'B,"Product B cut sho',
      /ends inside a quoted value \(line 3\): the feed is cut short/,
    ],
    [
      '/quote.tsv',
      'id\ttitle\tprice\nA\tProduct A\t19.99 USD\nB\t"Product B cut',
      /ends inside a quoted value \(line 3\): the feed is cut short/,
    ],
    [
      '/item.xml',
      XML_HEAD + xmlItem('A') + '<item><g:id>B</g:id><g:title>Prod',
      /the XML ends inside item 2 \(its <item> never closes\): the feed is cut short/,
    ],
    [
      '/root.xml',
      XML_HEAD + xmlItem('A') + xmlItem('B') + '</channel>',
      /the XML ends before its <\/rss> end tag: the feed is cut short/,
    ],
    [
      '/array.json',
      JSON.stringify([object('A'), object('B')]).slice(0, -1),
      /the JSON ends inside the list of products, after 2 item\(s\): the feed is cut short/,
    ],
    [
      '/object.json',
      JSON.stringify({ products: [object('A'), object('B')] }).slice(0, -30),
      /the JSON ends inside the list of products, after 1 item\(s\)/,
    ],
    [
      '/cut.jsonl',
      JSON.stringify(object('A')) + '\n' + JSON.stringify(object('B')).slice(0, -5),
      /the last line \(line 2\) has no line end and is not whole JSON: the feed is cut short/,
    ],
    [
      '/feed.csv.gz',
      gzipped.subarray(0, gzipped.length - 12),
      /the gzip data ends early: the feed is cut short/,
    ],
  ];
  for (const [path, body, message] of cases) {
    for (const chunked of [false, true]) {
      server.set(path, { body, chunked });
      await t.rejects(
        collectFeed({ url: server.url(path) }),
        { name: 'SourceError', kind: 'invalid', message },
        `${path}${chunked ? ' (chunked)' : ''}`,
      );
    }
  }
  // The same feeds whole read every item.
  server.set('/whole.csv.gz', { body: gzipped });
  t.same(ids(await collectFeed({ url: server.url('/whole.csv.gz') })), ['A', 'B'], 'gzip, whole');
  // A last line without a line end is read when it is whole JSON.
  server.set('/whole.jsonl', JSON.stringify(object('A')) + '\n' + JSON.stringify(object('B')));
  t.same(ids(await collectFeed({ url: server.url('/whole.jsonl') })), ['A', 'B'], 'NDJSON, no end');
  server.set('/whole.xml', XML_HEAD + xmlItem('A') + xmlItem('B') + XML_TAIL);
  t.same(ids(await collectFeed({ url: server.url('/whole.xml') })), ['A', 'B'], 'XML, whole');
});

/** `[[[...]]]` nested `depth` deep. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

t.test('JSON nested deeper than 64 is refused alone; the items around it are read', async (t) => {
  const server = await startFeedServer(t);
  // 64 levels in all (the item's object and 63 arrays) is allowed; 65 is not.
  const deepest = JSON.stringify(object('C', { x: 0 })).replace('0', nested(63));
  const tooDeep = JSON.stringify(object('D', { x: 0 })).replace('0', nested(64));
  const json = `[${JSON.stringify(object('A'))}, ${nested(100_000)}, ${deepest}, ${tooDeep}, ${JSON.stringify(object('B'))}]`;
  server.set('/deep.json', json);
  const started = Date.now();
  t.same(ids(await collectFeed({ url: server.url('/deep.json') })), [
    'A',
    'error: item 2 cannot be read: the JSON nests deeper than 64 levels',
    'C',
    'error: item 4 cannot be read: the JSON nests deeper than 64 levels',
    'B',
  ]);
  t.comment(`a 200 KB array nested 100,000 deep read in ${Date.now() - started} ms`);
  const lines = [JSON.stringify(object('A')), nested(100_000), deepest, tooDeep, ''].join('\n');
  server.set('/deep.jsonl', lines);
  t.same(ids(await collectFeed({ url: server.url('/deep.jsonl') })), [
    'A',
    'error: item 2 cannot be read: the JSON nests deeper than 64 levels',
    'C',
    'error: item 4 cannot be read: the JSON nests deeper than 64 levels',
  ]);
});

t.test('a field over 1 MB is refused alone, in every format', async (t) => {
  const server = await startFeedServer(t);
  const long = 'x'.repeat(1024 * 1024 + 1);
  const fits = 'y'.repeat(1024 * 1024 - 10);
  // JSON's scanner refuses the text as it streams by; the others, the record they read.
  const refused = /^error: item \d+ cannot be read: (the field "description"|a text) is over 1 MB$/;
  const feeds: [string, string][] = [
    [
      '/long.csv',
      'id,title,price,link,availability,description\n' +
        `A,Product A,19.99 USD,https://shop.example.com/p/A,in_stock,${fits}\n` +
        `B,Product B,19.99 USD,https://shop.example.com/p/B,in_stock,"${long}"\n` +
        'C,Product C,19.99 USD,https://shop.example.com/p/C,in_stock,short\n',
    ],
    [
      '/long.json',
      JSON.stringify([
        object('A', { description: fits }),
        object('B', { description: long }),
        object('C'),
      ]),
    ],
    [
      '/long.jsonl',
      [object('A', { description: fits }), object('B', { description: long }), object('C'), null]
        .map((o) => (o ? JSON.stringify(o) : ''))
        .join('\n'),
    ],
    [
      '/long.xml',
      XML_HEAD +
        xmlItem('A', `<g:description>${fits}</g:description>`) +
        xmlItem('B', `<g:description>${long}</g:description>`) +
        xmlItem('C') +
        XML_TAIL,
    ],
  ];
  for (const [path, body] of feeds) {
    server.set(path, body);
    const read = ids(await collectFeed({ url: server.url(path) }));
    t.equal(read.length, 3, path);
    t.equal(read[0], 'A', `${path}: a field under 1 MB is read`);
    t.match(read[1], refused, `${path}: a field over 1 MB is refused`);
    t.equal(read[2], 'C', `${path}: the item after it is read`);
  }
});

/**
 * A local server streaming `head`, then `fill` bytes of `x` in 64 KB writes (with backpressure:
 * the server holds one block, never the whole body), then `tail`.
 */
async function streamingServer(t: Test, head: string, fill: number, tail: string) {
  const block = Buffer.alloc(64 * 1024, 'x');
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write(head);
    let sent = 0;
    const pump = () => {
      while (sent < fill) {
        const piece = fill - sent >= block.length ? block : block.subarray(0, fill - sent);
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end(tail);
    };
    res.on('close', () => (sent = fill + 1));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Reads a feed while sampling RSS: the largest growth over the RSS before, in MB. */
async function peakGrowth(settings: Record<string, unknown>) {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    const items = await collectFeed(settings);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { items, growthMb: (peak - before) / (1024 * 1024) };
  } finally {
    clearInterval(sampler);
  }
}

const MB = 1024 * 1024;
/**
 * RSS counts what the allocator has not handed back yet: streaming 200 MB through a socket
 * alone (server and client in this process, no parsing) grows it by 50 to 80 MB here. Holding
 * the field would take 200 MB and more (the finding: 164 -> 395 MB), so this bound still tells
 * the two apart; what the reader itself holds is checked exactly in the guard's own test.
 */
const RSS_BOUND_MB = 128;

t.test(
  'one 200 MB quoted CSV field is refused alone, without the memory it would take',
  async (t) => {
    const origin = await streamingServer(
      t,
      CSV_HEAD + csvRow('A') + 'B,"',
      200 * MB,
      '",19.99 USD,https://shop.example.com/p/B,in_stock\n' + csvRow('C'),
    );
    const { items, growthMb } = await peakGrowth({
      url: `${origin}/huge.csv`,
      max_bytes: 300 * MB,
      format: 'csv',
    });
    t.same(ids(items), ['A', 'error: item 3 cannot be read: the line is over 8 MB', 'C']);
    t.comment(`peak RSS growth reading a 200 MB field: ${growthMb.toFixed(1)} MB`);
    t.ok(growthMb < RSS_BOUND_MB, `RSS grew ${growthMb.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`);
  },
);

t.test('a 100 MB line, element or item is refused alone in NDJSON, JSON and XML', async (t) => {
  const cases: [string, string, string, string][] = [
    [
      'ndjson',
      JSON.stringify(object('A')) + '\n{"id":"B","description":"',
      '"}\n' + JSON.stringify(object('C')) + '\n',
      'error: item 2 cannot be read: the line is over 8 MB',
    ],
    [
      'json',
      `[${JSON.stringify(object('A'))},{"id":"B","description":"`,
      `"},${JSON.stringify(object('C'))}]`,
      'error: item 2 cannot be read: a text is over 1 MB',
    ],
    [
      'xml',
      XML_HEAD + xmlItem('A') + '<item><g:id>B</g:id><g:description>',
      '</g:description></item>' + xmlItem('C') + XML_TAIL,
      'error: item 2 cannot be read: a text is over 1 MB',
    ],
  ];
  for (const [format, head, tail, refusal] of cases) {
    const origin = await streamingServer(t, head, 100 * MB, tail);
    const { items, growthMb } = await peakGrowth({
      url: `${origin}/huge`,
      max_bytes: 200 * MB,
      format,
    });
    t.same(ids(items), ['A', refusal, 'C'], format);
    t.comment(`${format}: peak RSS growth ${growthMb.toFixed(1)} MB`);
    t.ok(
      growthMb < RSS_BOUND_MB,
      `${format}: RSS grew ${growthMb.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`,
    );
  }
});

t.test('the CSV guard lets a long record go as soon as it passes the cap', async (t) => {
  const refused: number[] = [];
  const guard = new DelimitedRecordGuard(',', 1000, (line) => refused.push(line));
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  const write = (text: string) =>
    new Promise<void>((resolve, reject) =>
      guard.write(Buffer.from(text), (err) => (err ? reject(err) : resolve())),
    );
  await write('id,title\nA,"one, with ""quotes""\nand a line end"\nB,"');
  t.same(refused, [], 'nothing refused under the cap');
  t.equal(Buffer.concat(out).toString(), 'id,title\nA,"one, with ""quotes""\nand a line end"\n');
  await write('x'.repeat(900));
  t.same(refused, []);
  await write('x'.repeat(200));
  t.same(refused, [4], 'refused the moment it passed 1000 bytes, naming its first line');
  // A megabyte more of it, with line ends inside the quotes: nothing of it is passed on.
  for (let i = 0; i < 100; i++) await write('y'.repeat(10_000) + '\n');
  await write('",end\nC,three\n');
  guard.end();
  await new Promise((resolve) => guard.once('end', resolve));
  t.equal(
    Buffer.concat(out).toString(),
    'id,title\nA,"one, with ""quotes""\nand a line end"\n' + '\n'.repeat(101) + 'C,three\n',
    'the refused record became as many empty lines as it spanned',
  );
  // A file that ends inside a refused quoted value was cut short.
  const cut = new DelimitedRecordGuard(',', 10, () => {});
  cut.on('data', () => {});
  const failed = new Promise((resolve) => cut.once('error', resolve));
  cut.end(Buffer.from('id\n"' + 'x'.repeat(50)));
  t.match(await failed, {
    message: /ends inside a quoted value \(line 2\): the feed is cut short/,
  });
});

t.test('reading a hostile feed leaves the event loop free', async (t) => {
  const server = await startFeedServer(t);
  // 2,000 items, every fifth nested 20,000 deep, every 97th (else) with a 1.5 MB text, the
  // rest ordinary: about 40 MB.
  const parts: string[] = [];
  let refused = 0;
  for (let i = 1; i <= 2000; i++) {
    if (i % 5 === 0) parts.push(nested(20_000));
    else if (i % 97 === 0)
      parts.push(JSON.stringify(object(`P${i}`, { note: 'z'.repeat(1.5 * MB) })));
    else {
      parts.push(JSON.stringify(object(`P${i}`)));
      continue;
    }
    refused++;
  }
  server.set('/hostile.json', { body: `[${parts.join(',')}]`, chunked: true });
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  let items: SourceItem[];
  try {
    items = await collectFeed({ url: server.url('/hostile.json') });
  } finally {
    lag.disable();
  }
  const maxMs = lag.max / 1e6;
  const p99Ms = lag.percentile(99) / 1e6;
  t.comment(
    `event loop delay while reading: p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`,
  );
  t.equal(items.filter((i) => i.kind === 'product').length, 2000 - refused);
  t.equal(items.filter((i) => i.kind === 'error').length, refused);
  // The strict figure (p99 under 100 ms beside an API) is a quiet machine's; this one is shared
  // by many processes on two cores, where a slice of 10 ms can take ten times as long. Before
  // the fix one first line of 64 KB held the loop for seconds (peekStream's backtracking
  // search), and JSON.parse of 100,000 levels for a quarter of a second per item.
  t.ok(maxMs < 1000, `the longest the event loop waited: ${maxMs.toFixed(1)} ms`);
});
