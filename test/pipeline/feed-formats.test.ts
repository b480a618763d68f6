import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify as csvStringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import t from 'tap';
import type { ProductRow } from '../../src/db/schema.js';
import {
  dropForbiddenCharacters,
  FEED_COLUMNS,
  feedSettings,
  toFeedItem,
  type FeedRecord,
} from '../../src/domain/feeds/record.js';
import { FEED_FORMATTERS, xmlText, type FeedMeta } from '../../pipeline/feed-formats.js';
import { createFeed, feedPath, runFeeds } from '../support/feeds.js';
import { productBody, startTestServer } from '../support/server.js';

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  trimValues: false,
  parseTagValue: false,
  processEntities: true,
  htmlEntities: true,
  isArray: (name) => name === 'item',
});

/** Records of a feed file, read back with a real parser; XML leaves empty values out. */
function readRecords(format: string, text: string): FeedRecord[] {
  if (format === 'json') return (JSON.parse(text) as { products: FeedRecord[] }).products;
  if (format === 'csv') return parseCsv(text, { columns: true }) as FeedRecord[];
  const doc = xmlParser.parse(text) as {
    rss: { channel: { item?: Record<string, string>[] } };
  };
  return (doc.rss.channel.item ?? []).map((item) => {
    const record = {} as FeedRecord;
    for (const c of FEED_COLUMNS) record[c] = item[`g:${c}`] ?? '';
    return record;
  });
}

/** The XML 1.0 Char production, code point by code point: the documented drop rule. */
function keepXmlChars(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (
      c === 0x9 ||
      c === 0xa ||
      c === 0xd ||
      (c >= 0x20 && c <= 0xd7ff) ||
      (c >= 0xe000 && c <= 0xfffd)
    ) {
      out += s[i]!;
    }
  }
  return out;
}

const tricky = fc.constantFrom(
  '"',
  ',',
  '\n',
  '\r',
  '\r\n',
  '\t',
  ' ',
  "'",
  '<',
  '>',
  '&',
  ']]>',
  '&amp;',
  '<![CDATA[x]]>',
  '😀',
  '👩‍👩‍👧',
  '\u0000',
  '\u0001',
  '\u0008',
  '\u000B',
  '\u000C',
  '\u001F',
  '\u007F',
  '\u0085',
  '\u2028',
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uDFFF',
  '\uFFFE',
  '\uFFFF',
  '\uFEFF',
  '=1+1',
  '-',
  '\\',
);
const anyUnit = fc.nat(0xffff).map((c) => String.fromCharCode(c));
const anyString = fc
  .array(
    fc.oneof(tricky, fc.string({ unit: anyUnit, maxLength: 6 }), fc.string({ maxLength: 6 })),
    {
      maxLength: 8,
    },
  )
  .map((parts) => parts.join(''));

function row(name: string, description: string, brand: string): ProductRow {
  return {
    id: 'SKU-1',
    name,
    description,
    price_minor: 7999,
    currency: 'USD',
    status: 'active',
    category: 'Apparel > Shoes',
    images: JSON.stringify(['https://img.example.com/a.jpg']),
    attributes: JSON.stringify({ brand, gtin: '4006381333931' }),
    brand,
    created_at: '2026-11-21T00:00:00.000Z',
    updated_at: '2026-11-21T00:00:00.000Z',
  };
}

const meta: FeedMeta = {
  id: 'feed_x',
  name: 'F',
  storeName: 'Store',
  storeUrl: 'https://s.example',
};

function render(format: keyof typeof FEED_FORMATTERS, records: FeedRecord[]): string {
  const f = FEED_FORMATTERS[format];
  return f.begin(meta) + f.records(records, true) + f.end(meta);
}

t.test('the drop rule removes exactly the characters XML 1.0 forbids', async (t) => {
  fc.assert(
    fc.property(anyString, (s) => {
      t.equal(dropForbiddenCharacters(s), keepXmlChars(s));
    }),
    { numRuns: 500 },
  );
  t.equal(dropForbiddenCharacters('a\u0001b\uD800c😀\uFFFEd\r\n\t'), 'abc😀d\r\n\t');
});

for (const format of ['json', 'csv', 'xml'] as const) {
  t.test(`any string survives ${format}, less the characters XML forbids`, async (t) => {
    fc.assert(
      fc.property(anyString, anyString, anyString, (name, description, brand) => {
        const { record } = toFeedItem(
          row(name, description, brand),
          feedSettings('Store', 'https://s.example'),
        );
        const text = render(format, [record]);
        if (format === 'xml') {
          if (XMLValidator.validate(text) !== true) throw new Error(`not well-formed: ${text}`);
          // Outside the CDATA sections, a `]]>` in character data is not well-formed XML.
          if (/]]>/.test(text.replace(/<!\[CDATA\[[\s\S]*?]]>/g, '')))
            throw new Error(`a raw ]]> in the XML: ${text}`);
        }
        const back = readRecords(format, text);
        if (back.length !== 1) throw new Error(`${back.length} records`);
        const got = back[0]!;
        const want = {
          title: keepXmlChars(name),
          description: keepXmlChars(description),
          brand: keepXmlChars(brand) || 'Store',
        };
        for (const [field, value] of Object.entries(want)) {
          if (got[field as keyof FeedRecord] !== value)
            throw new Error(
              `${field}: ${JSON.stringify(got[field as keyof FeedRecord])} !== ${JSON.stringify(value)}`,
            );
        }
      }),
      { numRuns: 300 },
    );
    t.pass('300 random records read back equal');
  });
}

t.test('the CSV writer gives the bytes csv-stringify gave, for any records', async (t) => {
  const record = fc.array(anyString, {
    minLength: FEED_COLUMNS.length,
    maxLength: FEED_COLUMNS.length,
  });
  fc.assert(
    fc.property(fc.array(record, { maxLength: 4 }), (rows) => {
      const records = rows.map(
        (cells) => Object.fromEntries(FEED_COLUMNS.map((c, i) => [c, cells[i]!])) as FeedRecord,
      );
      const want = csvStringify([[...FEED_COLUMNS], ...rows]);
      const got = render('csv', records);
      if (got !== want) throw new Error(`${JSON.stringify(got)} !== ${JSON.stringify(want)}`);
    }),
    { numRuns: 300 },
  );
  t.pass('300 random batches byte for byte');
});

t.test(
  'the three formats carry the same records and columns, read back with real parsers',
  async (t) => {
    const s = await startTestServer(t, { STORE_NAME: 'Shop & "Co" <1>' });
    const nasty =
      'Quote " comma , CR\r LF\n tab\t <b>&amp;</b> ]]> 😀 bell\u0007 vt\u000B \u2028 end ';
    const bodies = [
      productBody({ id: 'A-1', name: nasty.slice(0, 100), description: nasty }),
      productBody({
        id: 'A-2',
        name: '=SUM(A1) leading formula',
        description: null,
        category: 'Home > Lighting',
        images: [
          'https://img.example.com/1.jpg',
          'https://img.example.com/2,3.jpg',
          'https://img.example.com/4.jpg',
        ],
        attributes: {
          brand: 'Ünïcödé',
          gtin: '4006381333931',
          mpn: 'M,1',
          condition: 'used',
          availability: 'preorder',
          inventory_quantity: 0,
          item_group_id: 'G-1',
          color: 'Red "ruby"',
          size: 'XL',
          material: 'cotton',
          gender: 'unisex',
          age_group: 'adult',
          url: 'https://shop.example.com/a-2?x=1&y=2',
          enable_checkout: true,
        },
      }),
      productBody({ id: 'A-3', name: 'No extras', images: [], attributes: {} }),
      productBody({ id: 'A-4', name: 'Draft', status: 'draft' }),
    ];
    for (const body of bodies) {
      const res = await s.request('POST', '/v1/products', { body });
      t.equal(res.status, 201, res.text);
    }
    const feeds = {
      json: await createFeed(s, { name: 'All <json>', format: 'json' }),
      csv: await createFeed(s, { name: 'All csv', format: 'csv' }),
      xml: await createFeed(s, { name: 'All & xml', format: 'xml' }),
    };
    t.equal((await runFeeds(s)).status, 'succeeded');
    const read = (format: 'json' | 'csv' | 'xml') =>
      fs.readFileSync(feedPath(s, feeds[format].id, format), 'utf8');
    const json = readRecords('json', read('json'));
    const csv = readRecords('csv', read('csv'));
    const xml = readRecords('xml', read('xml'));
    t.equal(json.length, 3, 'drafts are left out');
    t.same(csv, json, 'CSV and JSON carry the same records');
    t.same(xml, json, 'XML and JSON carry the same records');
    for (const record of json)
      t.same(Object.keys(record), [...FEED_COLUMNS], 'every column, in order');
    t.same(read('csv').split('\n')[0], FEED_COLUMNS.join(','), 'the CSV header is the column list');

    const [a1, a2, a3] = json as [FeedRecord, FeedRecord, FeedRecord];
    t.equal(
      a1.description,
      nasty.replace('\u0007', '').replace('\u000B', ''),
      'only forbidden characters go',
    );
    t.match(a2, {
      id: 'A-2',
      title: '=SUM(A1) leading formula',
      description: '',
      link: 'https://shop.example.com/a-2?x=1&y=2',
      image_link: 'https://img.example.com/1.jpg',
      additional_image_link: 'https://img.example.com/2%2C3.jpg,https://img.example.com/4.jpg',
      price: '79.99 USD',
      availability: 'preorder',
      inventory_quantity: '0',
      brand: 'Ünïcödé',
      product_category: 'Home > Lighting',
      gtin: '4006381333931',
      mpn: 'M,1',
      condition: 'used',
      item_group_id: 'G-1',
      color: 'Red "ruby"',
      seller_name: 'Shop & "Co" <1>',
      seller_url: s.config.FEEDS_URL,
      enable_search: 'true',
      enable_checkout: 'true',
      is_eligible_search: 'true',
      is_eligible_checkout: 'true',
    });
    t.match(a3, {
      image_link: '',
      brand: 'Shop & "Co" <1>',
      availability: 'in_stock',
      enable_checkout: 'false',
      is_eligible_checkout: 'false',
    });

    const xmlText = read('xml');
    t.equal(XMLValidator.validate(xmlText), true, 'well-formed XML');
    t.match(
      xmlText,
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<rss version="2.0" xmlns:g="http:\/\/base.google.com\/ns\/1.0">\n<channel>\n<title>All &amp; xml<\/title>/,
    );
    const doc = xmlParser.parse(xmlText) as { rss: { channel: Record<string, unknown> } };
    t.equal(doc.rss.channel.link, s.config.FEEDS_URL, 'RSS 2.0 channel link');
    t.equal(doc.rss.channel.description, 'Products of Shop & "Co" <1>');
    t.equal(JSON.parse(read('json')).name, 'All <json>');
    const xmllint = spawnSync('xmllint', ['--noout', feedPath(s, feeds.xml.id, 'xml')], {
      encoding: 'utf8',
    });
    const skip = xmllint.error ? 'xmllint is not installed (Debian package libxml2-utils)' : false;
    await t.test('xmllint accepts the XML', { skip }, async (t) => {
      t.equal(xmllint.status, 0, xmllint.stderr);
    });
    for (const format of ['json', 'csv', 'xml'] as const) {
      const gz = zlib.gunzipSync(fs.readFileSync(`${feedPath(s, feeds[format].id, format)}.gz`));
      t.equal(gz.toString('utf8'), read(format), `the ${format}.gz sibling holds the same bytes`);
    }
  },
);

t.test('an empty feed is a valid file in each format', async (t) => {
  for (const format of ['json', 'csv', 'xml'] as const) {
    const text = render(format, []);
    t.same(readRecords(format, text), [], format);
  }
  t.equal(XMLValidator.validate(render('xml', [])), true);
});

t.test('XML text: as is, a CDATA section, or references when CDATA cannot carry it', async (t) => {
  t.equal(xmlText('plain "quoted" text'), 'plain "quoted" text');
  t.equal(xmlText('Tom & Jerry <3'), '<![CDATA[Tom & Jerry <3]]>');
  t.equal(xmlText('a ]]> b & c'), 'a ]]&gt; b &amp; c', ']]> cannot sit in a CDATA section');
  t.equal(xmlText('line\r\nnext <br>'), 'line&#13;\nnext &lt;br&gt;', 'CR survives only as &#13;');
});
