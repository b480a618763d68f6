import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import t from 'tap';
import { JsonArrayScanner } from '../../src/platforms/feed-json.js';
import { readRecords, type FeedFormat, type RawRecord } from '../../src/platforms/feed-formats.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/feeds/', import.meta.url));
const fixture = (name: string) => readFileSync(FIXTURES + name);

/** The body cut at the given byte offsets (through multi-byte characters too). */
function pieces(body: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, body.length]) {
    if (c > from) out.push(body.subarray(from, c));
    from = c;
  }
  return out;
}

async function records(chunks: Buffer[], format: FeedFormat): Promise<RawRecord[]> {
  const out: RawRecord[] = [];
  for await (const r of readRecords(Readable.from(chunks), format)) out.push(r);
  return out;
}

const FILES: [string, FeedFormat][] = [
  ['openai.csv', 'csv'],
  ['google.tsv', 'tsv'],
  ['openai.jsonl', 'ndjson'],
  ['openai.json', 'json'],
  ['google-rss.xml', 'xml'],
  ['google-atom.xml', 'xml'],
];

t.test('every reader gives the same records however the bytes are cut', async (t) => {
  for (const [name, format] of FILES) {
    const body = Buffer.concat([Buffer.from('\uFEFF'), fixture(name)]);
    const whole = await records([body], format);
    t.ok(whole.length >= 2, `${name}: ${whole.length} records`);
    t.notOk(
      whole.some((r) => r.kind === 'bad'),
      `${name}: no bad record`,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
        t.strictSame(await records(pieces(body, cuts), format), whole);
      }),
      { numRuns: 60 },
    );
    const bytes = pieces(
      body,
      Array.from({ length: body.length }, (_, i) => i),
    );
    t.strictSame(await records(bytes, format), whole, `${name}: one byte at a time`);
  }
});

t.test('JsonArrayScanner cuts out the elements of the product array only', async (t) => {
  const scan = (text: string) => {
    const s = new JsonArrayScanner();
    const out = s.push(text);
    s.finish();
    return out;
  };
  t.same(scan('[{"a":1}, {"b":[1,2,{"c":"]}"}]} ,"x\\"]", 3, null]'), [
    '{"a":1}',
    '{"b":[1,2,{"c":"]}"}]}',
    '"x\\"]"',
    '3',
    'null',
  ]);
  t.same(
    scan(
      '{"id":"feed_1","meta":{"products":[{"no":1}]},"products":[{"yes":1}],"after":{"x":[{}]}}',
    ),
    ['{"yes":1}'],
    'only the top-level products array, nothing after it',
  );
  t.same(scan('{"items":[]}'), []);
  t.same(scan('{"data":[{"a":"\\u005b"}]}'), ['{"a":"\\u005b"}']);
  t.throws(() => scan('{"hello":"world"}'), { message: /holds no list of products/ });
  t.throws(() => scan('[{"a":1}'), {
    message:
      'the JSON ends inside the list of products, after 1 item(s): the feed is cut short (the list never closes)',
  });
  t.throws(() => scan('{"products":[{"a":1},'), {
    message: /ends inside the list of products, after 1 item\(s\): the feed is cut short/,
  });
  t.throws(() => scan('{"products":[{"a":1}], "more": {'), {
    message: 'the JSON ends early: the feed is cut short',
  });
  t.throws(() => scan('[1]]'), { message: /closes more than it opens|goes on after its end/ });
  t.throws(() => scan('[1] [2]'), { message: 'the JSON goes on after its end' });
  t.throws(() => scan(''), { message: 'the feed is empty' });
  // Over a limit, an element is refused alone (and not held); the next one reads.
  const small = new JsonArrayScanner({ maxElementChars: 30, maxStringChars: 10, maxDepth: 3 });
  t.same(small.push('[{"a":"' + 'x'.repeat(20)), []);
  t.same(small.push('"}, {"a":[[1]]}, {"a":[[[1]]]}, {"b":1,"c":2,"d":3,"e":4,"f":5,"g":6}, 7]'), [
    { refused: 'a text is over 10 bytes' },
    '{"a":[[1]]}',
    { refused: 'the JSON nests deeper than 3 levels' },
    { refused: 'the item is over 30 bytes' },
    '7',
  ]);
  small.finish();
});

t.test('a bad element, line or item fails alone', async (t) => {
  const json = await records([Buffer.from('[{"id":"a"}, [1], "text", {"id":"b"}]')], 'json');
  t.same(
    json.map((r) => (r.kind === 'bad' ? `bad ${r.position}: ${r.reason}` : r.fields.id)),
    ['a', 'bad 2: the item is not an object', 'bad 3: the item is not an object', 'b'],
  );
  const ndjson = await records([Buffer.from('{"id":"a"}\n[1]\n{oops\n\n{"id":"b"}')], 'ndjson');
  t.same(
    ndjson.map((r) => (r.kind === 'bad' ? `bad ${r.position}` : r.fields.id)),
    ['a', 'bad 2', 'bad 3', 'b'],
  );
  const xml = await records(
    [
      Buffer.from(
        '<rss><channel><item><g:id>a</g:id></item><item><g:id>b</g:title></item>' +
          '<item/><item><g:id>c</g:id><g:note><![CDATA[</item> inside]]></g:note></item></channel></rss>',
      ),
    ],
    'xml',
  );
  t.same(
    xml.map((r) => (r.kind === 'bad' ? `bad ${r.position}` : r.fields.id)),
    ['a', 'bad 2', 'c'],
  );
  t.equal(xml[2]!.kind === 'record' && xml[2]!.fields.note, '</item> inside');
  const csv = await records(
    [Buffer.from('id,title\na,one\nb,x"y"z\nc,"three, with comma"\n')],
    'csv',
  );
  t.same(
    csv.map((r) => (r.kind === 'bad' ? `bad ${r.position}` : r.fields.title)),
    ['one', 'bad 3', 'three, with comma'],
  );
  // After a quoted value that goes on past its closing quote, csv-parse reads the next line
  // out of step too: both are reported, and the lines after them read well again.
  const quoted = await records(
    [Buffer.from('id,title\na,"one"\nb,"bad"quote\nc,"three"\nd,four\n')],
    'csv',
  );
  t.same(
    quoted.map((r) => (r.kind === 'bad' ? `bad ${r.position}` : r.fields.title)),
    ['one', 'bad 3', 'bad 4', 'four'],
  );
});

t.test('column names: g: prefixes, case and spaces give one spelling', async (t) => {
  const csv = await records(
    [
      Buffer.from(
        'g:ID,Title,Image Link,additional-image-link\n1,a,https://x/1.jpg,https://x/2.jpg\n',
      ),
    ],
    'csv',
  );
  t.same(csv[0], {
    kind: 'record',
    position: 2,
    fields: {
      id: '1',
      title: 'a',
      image_link: 'https://x/1.jpg',
      additional_image_link: 'https://x/2.jpg',
    },
  });
  const json = await records(
    [
      Buffer.from(
        '[{"id":"1","price":39.5,"on":true,"images":["a","b"],"attributes":{"brand":"B","id":"no"}}]',
      ),
    ],
    'json',
  );
  t.same(json[0], {
    kind: 'record',
    position: 1,
    fields: { id: '1', price: '39.5', on: 'true', images: ['a', 'b'], brand: 'B' },
  });
});

t.test('an XML feed without items, or not XML at all', async (t) => {
  t.same(await records([Buffer.from('<rss><channel><title>x</title></channel></rss>')], 'xml'), []);
  await t.rejects(records([Buffer.from('id,title\n')], 'xml'), { message: 'the feed is not XML' });
  await t.rejects(records([Buffer.from('<html><body>Login</body></html>')], 'xml'), {
    message: 'the XML has no <item> or <entry> elements',
  });
});
