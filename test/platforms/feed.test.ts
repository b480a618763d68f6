import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createHttpClient } from '../../src/net/http-client.js';
import { readCatalogueProduct } from '../../src/domain/catalogue/product.js';
import {
  dropForbiddenCharacters,
  feedItemOf,
  feedSettings,
} from '../../src/domain/feeds/record.js';
import { formatMinorUnits } from '../../src/domain/money.js';
import { FEED_FORMATTERS } from '../../pipeline/feed-formats.js';
import { catalogueRow } from '../support/catalogue.js';
import { feedSource, readFeedSettings } from '../../src/platforms/feed.js';
import { sniffFormat } from '../../src/platforms/feed-formats.js';
import { type SourceContext, type SourceItem } from '../../src/domain/integrations/source.js';
import { startFeedServer, type FeedServer } from '../support/feed-server.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/feeds/', import.meta.url));
const fixture = (name: string) => readFileSync(FIXTURES + name, 'utf8');

/** A source context as the sync gives one, with state kept between runs like the sync does. */
function context(
  settings: Record<string, unknown>,
  saved: { state: Record<string, unknown> } = { state: {} },
  controller = new AbortController(),
): SourceContext & { saved: { state: Record<string, unknown> } } {
  let pending: Record<string, unknown> | undefined;
  return {
    integrationId: 'int_test',
    shopDomain: '127.0.0.1',
    credentials: null,
    settings,
    http: createHttpClient({ allowPrivate: true, sleep: async () => {} }),
    defaultCurrency: 'USD',
    signal: controller.signal,
    logger: pino({ level: 'silent' }),
    now: () => new Date('2026-11-25T12:00:00Z'),
    sleep: async () => {},
    state: saved.state,
    setState(state) {
      pending = state;
      // The sync saves the state once the run has finished well: the tests do after collect().
      saved.state = { ...(pending ?? {}) };
    },
    saveCredentials: async () => {},
    saved,
  };
}

async function collect(ctx: SourceContext): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of feedSource.items(ctx)) out.push(item);
  return out;
}

const products = (items: SourceItem[]) =>
  items.flatMap((i) => (i.kind === 'product' ? [{ id: i.externalId, ...i.product }] : []));
const errors = (items: SourceItem[]) => items.filter((i) => i.kind === 'error');

async function read(server: FeedServer, path: string, body: string, settings = {}) {
  server.set(path, body);
  return collect(context({ url: server.url(path), ...settings }));
}

t.test('Google Merchant Center RSS 2.0 with g: elements', async (t) => {
  const server = await startFeedServer(t);
  const items = await read(server, '/google.xml', fixture('google-rss.xml'));
  t.same(errors(items), []);
  t.same(products(items), [
    {
      id: 'TV_123456',
      name: 'LG 22LB4510 - 22" LED TV - 1080p (FullHD)',
      price: '159.00',
      currency: 'USD',
      description:
        'Attractively styled and boasting stunning picture quality, the LG 22LB4510 - 22" LED TV - 1080p (FullHD) is an excellent television/monitor. The LG 22LB4510 - 22" LED TV - 1080p (FullHD) sports a widescreen 1080p panel, perfect for watching movies in their original format, whilst also providing plenty of working space for your other applications.',
      status: 'active',
      category: 'Consumer Electronics > TVs > Flat Panel TVs',
      images: [
        'https://images.example.com/TV_123456.png',
        'https://images.example.com/TV_123456_side.png',
        'https://images.example.com/TV_123456_back.png',
      ],
      attributes: {
        google_product_category: 'Electronics > Video > Televisions > Flat Panel Televisions',
        url: 'https://www.example.com/electronics/tv/22LB4510.html',
        brand: 'LG',
        mpn: '22LB4510/US',
        condition: 'new',
        gtin: '00012345600012',
        availability: 'in_stock',
      },
    },
    {
      id: 'DRESS_1_S',
      name: "Women's Summer Dress <Red> & White, S",
      price: '39.90',
      currency: 'EUR',
      description: 'Light cotton dress & belt \u2014 caf\u00e9 print, size S.',
      status: 'active',
      category: 'Apparel > Dresses',
      images: ['https://images.example.com/DRESS_1.jpg'],
      attributes: {
        original_price: '49.90',
        url: 'https://www.example.com/clothing/dress-1?size=s&color=red',
        brand: 'Sunwear',
        mpn: 'SW-DRESS-1-S',
        color: 'Red',
        size: 'S',
        item_group_id: 'DRESS_1',
        gender: 'female',
        age_group: 'adult',
        availability: 'out_of_stock',
        features: ['100% cotton', 'Machine washable, 30 \u00b0C'],
      },
    },
  ]);
});

t.test(
  'Google Merchant Center Atom with g: elements: the g: value wins over Atom own',
  async (t) => {
    const server = await startFeedServer(t);
    const items = await read(server, '/google.atom', fixture('google-atom.xml'));
    t.same(errors(items), []);
    t.same(products(items), [
      {
        id: 'TV_123456',
        name: 'LG 22LB4510 - 22" LED TV - 1080p (FullHD)',
        price: '159.00',
        currency: 'USD',
        description: 'Attractively styled and boasting stunning picture quality.',
        status: 'active',
        category: null,
        images: ['https://images.example.com/TV_123456.png'],
        attributes: {
          google_product_category: '404',
          url: 'https://www.example.com/electronics/tv/22LB4510.html',
          brand: 'LG',
          mpn: '22LB4510/US',
          condition: 'new',
          gtin: '00012345600012',
          availability: 'in_stock',
        },
      },
      {
        id: 'BOOK_9',
        name: 'Ελληνικά για αρχάριους — 日本語 📚',
        price: '2500',
        currency: 'JPY',
        description: 'Un livre <très> utile.',
        status: 'active',
        category: null,
        images: ['https://images.example.com/BOOK_9.jpg'],
        attributes: {
          url: 'https://www.example.com/books/9',
          gtin: '4006381333931',
          availability: 'preorder',
        },
      },
    ]);
  },
);

t.test(
  'Google Merchant Center tab-separated, with sale prices in and out of their dates',
  async (t) => {
    const server = await startFeedServer(t);
    const items = await read(server, '/products.tsv', fixture('google.tsv'));
    t.same(errors(items), []);
    const [m, l, mug] = products(items);
    t.match(m, {
      id: 'TSHIRT_1_M',
      name: 'Basic T-Shirt, "Organic" M',
      price: '14.99',
      currency: 'USD',
      category: 'Apparel > Shirts',
      attributes: {
        original_price: '19.99',
        availability: 'in_stock',
        item_group_id: 'TSHIRT_1',
        size: 'M',
        gtin: '5901234123457',
        google_product_category: 'Apparel & Accessories > Clothing > Shirts & Tops',
      },
    });
    t.match(l, { id: 'TSHIRT_1_L', price: '19.99', attributes: { size: 'L' } });
    t.notOk('original_price' in l!.attributes!, 'a sale that has ended is not the price');
    t.notOk('gtin' in l!.attributes!, 'an empty column is no value');
    t.same(mug, {
      id: 'MUG_7',
      name: 'Stoneware Mug',
      price: '12.00',
      currency: 'USD',
      description: 'Holds 350 ml.',
      status: 'active',
      category: 'Home > Kitchen > Mugs',
      images: ['https://images.example.com/mug.jpg'],
      attributes: {
        url: 'https://www.example.com/mug',
        brand: 'Kiln',
        condition: 'new',
        availability: 'backorder',
      },
    });
  },
);

const SHOE = {
  id: 'SKU12345',
  name: "Men's Trail Running Shoes Black",
  price: '79.99',
  currency: 'USD',
  description: 'Waterproof trail shoe with cushioned sole.\nTwo lines, "quoted", and a comma.',
  status: 'active',
  category: 'Apparel & Accessories > Shoes',
  images: [
    'https://example.com/image1.jpg',
    'https://example.com/image2.jpg',
    'https://example.com/image3.jpg',
  ],
  attributes: {
    url: 'https://example.com/product/SKU12345',
    brand: 'OpenAI',
    mpn: 'GPT5',
    color: 'Black',
    size: '10',
    material: 'Leather',
    item_group_id: 'SHOE123GROUP',
    condition: 'new',
    gtin: '00360002914522',
    availability: 'in_stock',
    inventory_quantity: 25,
    enable_checkout: true,
  },
};

/** What the OpenAI fixtures hold, in every format: three products, and a gift card without price. */
function checkOpenAi(t: Test, items: SourceItem[]) {
  const got = products(items);
  t.same(got[0], SHOE);
  t.match(got[1], {
    id: 'SKU12346',
    attributes: { availability: 'out_of_stock', inventory_quantity: 0, size: '11' },
  });
  t.notOk('enable_checkout' in got[1]!.attributes!, 'checkout off is the default: not stored');
  t.match(got[2], {
    id: 'CANDLE-2',
    name: 'Soy candle, "Fig & Cedar"',
    description: 'Hand poured.\r\nBurns 40 h.',
    price: '24.50',
    attributes: { brand: 'Wick & Co', availability: 'preorder', enable_checkout: true },
  });
  t.equal(got.length, 3);
  t.same(errors(items), [
    { kind: 'error', externalId: 'GIFT-CARD', field: 'price', reason: 'the item has no price' },
  ]);
  t.equal(
    items.findIndex((i) => i.kind === 'error'),
    2,
    'the bad row fails alone, in place',
  );
}

t.test('OpenAI flat feed, CSV with the older flag names: CRLF, quoted newlines', async (t) => {
  const server = await startFeedServer(t);
  const csv = fixture('openai.csv');
  t.match(csv, /\r\n/, 'the fixture has CRLF line ends');
  checkOpenAi(t, await read(server, '/openai.csv', csv));
});

t.test('a BOM before the header changes nothing', async (t) => {
  const server = await startFeedServer(t);
  checkOpenAi(t, await read(server, '/bom.csv', '\uFEFF' + fixture('openai.csv')));
  checkOpenAi(t, await read(server, '/bom.jsonl', '\uFEFF' + fixture('openai.jsonl')));
  checkOpenAi(t, await read(server, '/bom.json', '\uFEFF' + fixture('openai.json')));
  const items = await read(server, '/bom.xml', '\uFEFF' + fixture('google-rss.xml'));
  t.equal(products(items).length, 2);
});

t.test('OpenAI flat feed, JSON Lines with the current flag names and a bad line', async (t) => {
  const server = await startFeedServer(t);
  const lines = fixture('openai.jsonl').split('\n');
  lines.splice(2, 0, '{"id": "BROKEN", "title": ', '');
  const items = await read(server, '/openai.jsonl', lines.join('\r\n'));
  const broken = items.find((i) => i.kind === 'error' && i.externalId === null);
  t.match(broken, { field: 'item', reason: /^item 3 cannot be read: not JSON/ });
  checkOpenAi(
    t,
    items.filter((i) => i !== broken),
  );
});

t.test('OpenAI flat feed, JSON object with booleans and numbers', async (t) => {
  const server = await startFeedServer(t);
  checkOpenAi(t, await read(server, '/openai.json', fixture('openai.json')));
});

t.test('a JSON array, and a bare array of one line, read the same', async (t) => {
  const server = await startFeedServer(t);
  const list = (JSON.parse(fixture('openai.json')) as { products: unknown[] }).products;
  checkOpenAi(t, await read(server, '/a.json', JSON.stringify(list, null, 2)));
  checkOpenAi(t, await read(server, '/b.json', JSON.stringify(list)));
  checkOpenAi(t, await read(server, '/c.json', JSON.stringify({ items: list })));
});

t.test('the content decides the format; type and extension only break ties', async (t) => {
  const server = await startFeedServer(t);
  const cases: [string, string, string][] = [
    ['/download', fixture('openai.csv'), 'application/octet-stream'],
    ['/export.json', fixture('openai.csv'), 'application/json'],
    ['/feed', fixture('openai.jsonl'), 'text/plain'],
    ['/feed.csv', fixture('openai.json'), 'text/csv'],
    ['/feed.txt', fixture('openai.jsonl'), 'text/csv'],
  ];
  for (const [path, body, contentType] of cases) {
    server.set(path, { body, contentType });
    checkOpenAi(t, await collect(context({ url: server.url(path) })));
  }
  server.set('/g', { body: fixture('google.tsv'), contentType: 'text/plain' });
  t.equal(products(await collect(context({ url: server.url('/g') }))).length, 3, 'TSV');
  server.set('/x', { body: fixture('google-rss.xml'), contentType: 'text/plain' });
  t.equal(products(await collect(context({ url: server.url('/x') }))).length, 2, 'XML');
  server.set('/forced', { body: fixture('google.tsv'), contentType: 'text/csv' });
  const forced = await collect(context({ url: server.url('/forced'), format: 'tsv' }));
  t.equal(products(forced).length, 3, 'settings.format overrides sniffing');
});

t.test('sniffFormat', async (t) => {
  t.equal(sniffFormat('id,title,price\n1,a,2 USD\n'), 'csv');
  t.equal(sniffFormat('id\ttitle\tprice, with comma\n'), 'tsv');
  t.equal(sniffFormat('\uFEFF  <?xml version="1.0"?><rss>'), 'xml');
  t.equal(sniffFormat('[{"id":1}]'), 'json');
  t.equal(sniffFormat('{"id":"1","title":"a"}\n{"id":"2"}\n'), 'ndjson');
  t.equal(sniffFormat('{"products":[{"id":"1"}]}\n'), 'json', 'one line holding the list');
  t.equal(sniffFormat('{\n  "products": [\n'), 'json');
  t.equal(sniffFormat('{"id":"feed_1","name":"x","products":[\n{"id":"a"}'), 'json', 'ours');
  t.equal(sniffFormat('{"id":"1","title":"a very long li'), 'json', 'a cut first line');
  t.equal(
    sniffFormat('{"id":"1","title":"a very long li', { path: '/x.jsonl' }),
    'ndjson',
    'a cut first line, and the extension says',
  );
  t.equal(sniffFormat('id\n1\n', { contentType: 'text/tab-separated-values' }), 'tsv');
});

t.test('an unchanged feed costs one request: ETag, then 304 and not_modified alone', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', fixture('openai.csv'));
  const saved = { state: {} as Record<string, unknown> };
  const url = server.url('/feed.csv');
  const first = await collect(context({ url }, saved));
  t.equal(products(first).length, 3);
  t.match(saved.state, { url, etag: /^".+"$/, last_modified: /GMT$/ });
  t.equal(server.count('/feed.csv'), 1);

  const second = await collect(context({ url }, saved));
  t.same(second, [{ kind: 'not_modified' }]);
  t.equal(server.count('/feed.csv'), 2, 'one request');
  t.equal(server.requests[1]!.headers['if-none-match'], saved.state.etag);
  t.equal(server.requests[1]!.status, 304);

  server.set('/feed.csv', fixture('openai.csv').replace('79.99 USD', '69.99 USD'));
  const third = await collect(context({ url }, saved));
  t.equal(products(third)[0]!.price, '69.99', 'a changed feed is read again');
  t.equal(server.count('/feed.csv'), 3);

  const moved = await collect(context({ url: server.url('/feed.csv?v=2') }, saved));
  t.equal(products(moved).length, 3, 'another URL asks unconditionally');
  t.notOk(server.requests[3]!.headers['if-none-match']);
});

t.test('Last-Modified alone: If-Modified-Since, then 304', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.xml', { body: fixture('google-rss.xml'), etag: false });
  const saved = { state: {} as Record<string, unknown> };
  const url = server.url('/feed.xml');
  t.equal(products(await collect(context({ url }, saved))).length, 2);
  t.equal(saved.state.etag, null);
  t.same(await collect(context({ url }, saved)), [{ kind: 'not_modified' }]);
  t.equal(server.requests[1]!.headers['if-modified-since'], saved.state.last_modified);
  t.notOk(server.requests[1]!.headers['if-none-match']);
});

t.test('the size cap: declared or streamed, the run fails with a clear error', async (t) => {
  const server = await startFeedServer(t);
  server.generate('/declared.csv', { bytes: 1536 * 1024, declareLength: true });
  server.generate('/streamed.csv', { bytes: 1536 * 1024 });
  for (const path of ['/declared.csv', '/streamed.csv']) {
    const ctx = context({ url: server.url(path), max_bytes: 512 * 1024 });
    let seen = 0;
    await t.rejects(
      (async () => {
        for await (const item of feedSource.items(ctx)) if (item.kind === 'product') seen++;
      })(),
      {
        name: 'SourceError',
        kind: 'invalid',
        message: /larger than the 524288-byte cap.*max_bytes/,
      },
      path,
    );
    t.equal(server.count(path), 1, 'not retried');
    if (path === '/streamed.csv') t.ok(seen > 0, 'products were read as the body streamed');
  }
  const big = await collect(
    context({ url: server.url('/streamed.csv'), max_bytes: 2 * 1024 * 1024 }),
  );
  t.ok(products(big).length > 0, 'under a raised cap it reads');
  t.equal(errors(big).length, 0);
  t.equal(products(big).at(-1)!.id, `SKU-${products(big).length}`, 'every line, in order');
});

t.test('failures: 5xx retried then served; 404, 401 and refusals fail the run', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', fixture('openai.csv'));
  server.fail('/feed.csv', { status: 503, times: 2 });
  const items = await collect(context({ url: server.url('/feed.csv') }));
  t.equal(products(items).length, 3);
  t.equal(server.count('/feed.csv'), 3, 'two 503, then the feed');

  server.fail('/down.csv', { status: 502 });
  await t.rejects(collect(context({ url: server.url('/down.csv') })), {
    name: 'SourceError',
    kind: 'unavailable',
    message: /HTTP 502/,
  });
  await t.rejects(collect(context({ url: server.url('/missing.csv') })), {
    kind: 'invalid',
    message: /HTTP 404: there is no feed at that address/,
  });
  server.fail('/private.csv', { status: 401 });
  await t.rejects(collect(context({ url: server.url('/private.csv') })), {
    kind: 'auth',
    message: /HTTP 401: it needs credentials/,
  });
  await t.rejects(collect(context({})), { kind: 'invalid', message: /settings\.url is required/ });
  await t.rejects(collect(context({ url: server.url('/feed.csv'), max_bytes: -1 })), {
    message: /settings\.max_bytes/,
  });
  const guarded = context({ url: server.url('/feed.csv') });
  guarded.http = createHttpClient({ allowPrivate: false });
  await t.rejects(collect(guarded), {
    kind: 'invalid',
    message: /cannot be fetched: target refused: 127\.0\.0\.1, a loopback address/,
  });
});

t.test('credentials: HTTP Basic or a bearer token', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', fixture('openai.csv'));
  const basic = context({ url: server.url('/feed.csv') });
  basic.credentials = { username: 'shop', password: 's3cret' };
  await collect(basic);
  t.equal(server.requests[0]!.headers.authorization, `Basic ${btoa('shop:s3cret')}`);
  const bearer = context({ url: server.url('/feed.csv') });
  bearer.credentials = { token: 'tok_1' };
  await collect(bearer);
  t.equal(server.requests[1]!.headers.authorization, 'Bearer tok_1');
});

t.test('bad rows fail alone, each naming our field and the feed id', async (t) => {
  const server = await startFeedServer(t);
  const csv = [
    'id,title,price,link',
    'A,Good,10.00 USD,https://x.example/a',
    'B,Bad price,ten dollars,https://x.example/b',
    'C,Too precise,10.999 USD,https://x.example/c',
    'D,Negative,-1.00 USD,https://x.example/d',
    'E,Odd currency,10.00 XYZ,https://x.example/e',
    ',No id,10.00 USD,https://x.example/f',
    'G,,10.00 USD,https://x.example/g',
    'A,Repeated,11.00 USD,https://x.example/a2',
    'H,Thousands,"1,299.00 USD",https://x.example/h',
    'I,Currency first,EUR 12,https://x.example/i',
    'J,Yen,1500 JPY,https://x.example/j',
    'K,Bare number,12.5,https://x.example/k',
  ].join('\n');
  const items = await read(server, '/bad.csv', csv);
  t.same(
    products(items).map((p) => [p.id, p.price, p.currency]),
    [
      ['A', '10.00', 'USD'],
      ['H', '1299.00', 'USD'],
      ['I', '12', 'EUR'],
      ['J', '1500', 'JPY'],
      ['K', '12.5', 'USD'],
    ],
  );
  t.same(
    errors(items).map((e) => (e.kind === 'error' ? [e.externalId, e.field, e.reason] : [])),
    [
      ['B', 'price', 'must be an amount with a currency, such as "39.00 USD" (got "ten dollars")'],
      ['C', 'price', 'must have at most 2 decimal places for USD (got "10.999 USD")'],
      ['D', 'price', 'must not be negative (got "-1.00 USD")'],
      ['E', 'price', '"XYZ" is not an ISO 4217 currency code'],
      [null, 'id', 'the item has no id (item 7)'],
      ['G', 'name', 'the item has no title'],
      ['A', 'id', 'the id is repeated (item 9; item 2 is kept)'],
    ],
  );
});

t.test('test(): the format, the dialect and the first item, or what went wrong', async (t) => {
  const server = await startFeedServer(t);
  server.set('/openai.csv', fixture('openai.csv'));
  const ok = await feedSource.test(context({ url: server.url('/openai.csv') }));
  t.equal(ok.ok, true);
  t.match(
    ok.message,
    /^Read a CSV feed with OpenAI \/ ACP flat feed columns\. The first item has the columns enable_search, enable_checkout, id, gtin,.*; it reads as product "SKU12345"\.$/,
  );
  server.set('/google.xml', fixture('google-rss.xml'));
  const google = await feedSource.test(context({ url: server.url('/google.xml') }));
  t.match(google.message, /^Read a XML feed with Google Merchant Center columns\./);
  server.set('/new.jsonl', fixture('openai.jsonl'));
  const newer = await feedSource.test(context({ url: server.url('/new.jsonl') }));
  t.match(newer.message, /NDJSON feed with OpenAI \/ ACP flat feed columns \(current flag names\)/);
  server.generate('/huge.csv', { bytes: 50 * 1024 * 1024 });
  const huge = await feedSource.test(context({ url: server.url('/huge.csv') }));
  t.equal(huge.ok, true, 'reads only the head of a large feed');
  t.match(huge.message, /reads as product "SKU-1"/);
  t.ok(server.requests.at(-1)!.status === 200);
  const missing = await feedSource.test(context({ url: server.url('/nothing.csv') }));
  t.same(missing, {
    ok: false,
    message: 'the feed URL answered HTTP 404: there is no feed at that address',
  });
  server.set('/empty.json', '[]');
  t.same(await feedSource.test(context({ url: server.url('/empty.json') })), {
    ok: false,
    message: 'Read a JSON feed, but it has no items.',
  });
  server.set('/not.json', '{"hello": "world"}');
  t.match(await feedSource.test(context({ url: server.url('/not.json') })), {
    ok: false,
    message: /holds no list of products/,
  });
  t.equal(server.count('/openai.csv'), 1);
});

/** Text as a merchant writes it: any Unicode but the characters XML forbids, no edge spaces. */
const feedText = (maxLength: number) =>
  fc
    .string({ unit: 'grapheme', minLength: 1, maxLength })
    .map((s) => dropForbiddenCharacters(s).trim())
    .filter((s) => s.length > 0 && s.isWellFormed());

const GTINS = ['4006381333931', '00012345600012', '5901234123457', '00360002914522'];

/** A product our exports publish whole: active, with a brand and a stated availability. */
const exportable = fc.record({
  name: feedText(40),
  description: fc.option(feedText(120), { nil: null }),
  currency: fc.constantFrom('USD', 'EUR', 'JPY', 'KWD'),
  minor: fc.integer({ min: 1, max: 10_000_000 }),
  category: fc.option(
    fc
      .array(
        feedText(12).filter((l) => !l.includes('>')),
        { minLength: 1, maxLength: 3 },
      )
      .map((levels) => levels.join(' > ')),
    { nil: null },
  ),
  images: fc.array(
    fc.webUrl({ withQueryParameters: true }).filter((u) => !u.includes(',')),
    { maxLength: 4 },
  ),
  attributes: fc.record(
    {
      brand: feedText(30),
      availability: fc.constantFrom('in_stock', 'out_of_stock', 'preorder', 'backorder'),
      url: fc.webUrl(),
      gtin: fc.constantFrom(...GTINS),
      mpn: feedText(20),
      condition: fc.constantFrom('new', 'refurbished', 'used'),
      inventory_quantity: fc.integer({ min: 0, max: 1000 }),
      item_group_id: fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/),
      color: feedText(20),
      size: feedText(10),
      material: feedText(20),
      gender: fc.constantFrom('male', 'female', 'unisex'),
      age_group: fc.constantFrom('newborn', 'infant', 'toddler', 'kids', 'adult'),
      enable_search: fc.constant(false),
      enable_checkout: fc.constant(true),
    },
    { requiredKeys: ['brand', 'availability'] },
  ),
});

t.test('our own exports (JSON, CSV, XML) read back as the same products', async (t) => {
  const server = await startFeedServer(t);
  const settings = feedSettings('Roundtrip Store', 'https://store.example');
  const meta = {
    id: 'feed_rt',
    name: 'All & <everything>',
    storeName: 'Roundtrip Store',
    storeUrl: 'https://store.example',
  };
  let run = 0;
  type Sketch = typeof exportable extends fc.Arbitrary<infer T> ? T : never;
  const roundtrip = async (sketches: Sketch[]) => {
    const rows = sketches.map((p, i) =>
      catalogueRow({
        id: `P-${i}`,
        name: p.name,
        description: p.description,
        price_minor: p.minor,
        currency: p.currency,
        category: p.category,
        images: p.images,
        attributes: p.attributes,
      }),
    );
    const records = rows.map(
      (row) =>
        feedItemOf(readCatalogueProduct(row, { storeName: settings.storeName }), settings).record,
    );
    const expected = sketches.map((p, i) => ({
      id: `P-${i}`,
      name: p.name,
      description: p.description,
      price: formatMinorUnits(p.minor, p.currency),
      currency: p.currency,
      status: 'active',
      category: p.category,
      images: p.images,
      attributes: { ...p.attributes },
    }));
    run++;
    for (const format of ['json', 'csv', 'xml'] as const) {
      const f = FEED_FORMATTERS[format];
      const body = f.begin(meta) + f.records(records, true) + f.end(meta);
      const path = `/export-${run}.${format}`;
      server.set(path, body);
      const items = await collect(context({ url: server.url(path) }));
      t.same(errors(items), [], format);
      const got = products(items);
      if (!t.strictSame(got, expected, format))
        throw new Error(`${format} differs: ${JSON.stringify(got)} ${JSON.stringify(expected)}`);
    }
  };
  // Text that each format must escape, and entities that must be decoded once only.
  await roundtrip([
    {
      name: '&copy; "Fish & chips", <b>bold</b>',
      description: 'Line one\r\nline two ]]> &amp;amp; &#13; \u00e9\u0301 \u{1F600}\n\ttabbed',
      currency: 'KWD',
      minor: 1_234_567,
      category: 'Food & Drink > "Fish"',
      images: ['https://img.example.com/a.jpg?x=1&y=2', 'https://img.example.com/b.jpg'],
      attributes: { brand: '<Brand> & Co', availability: 'in_stock', enable_checkout: true },
    },
  ]);
  await fc.assert(
    fc.asyncProperty(fc.array(exportable, { minLength: 1, maxLength: 6 }), roundtrip),
    { numRuns: 40 },
  );
});

t.test('an image the API would refuse is left out; the product stays', async (t) => {
  const server = await startFeedServer(t);
  const long = `https://img.example.com/${'a'.repeat(2100)}.jpg`;
  const csv = [
    'id,title,price,image_link,additional_image_link',
    `A,Shoe,10 USD,ftp://img.example.com/a.jpg,"https://img.example.com/b.jpg,${long},not a url,https://img.example.com/b.jpg"`,
  ].join('\n');
  const [item] = products(await read(server, '/img.csv', csv));
  t.same(item!.images, ['https://img.example.com/b.jpg']);
  const many = Array.from({ length: 30 }, (_, i) => `https://img.example.com/${i}.jpg`);
  const json = JSON.stringify([
    {
      id: 'B',
      title: 'Many',
      price: '1 USD',
      image_link: many[0],
      additional_image_link: many.slice(1),
    },
  ]);
  const [b] = products(await read(server, '/many.json', json));
  t.same(b!.images, many.slice(0, 20), 'at most 20, in order');
});

t.test('lossy fields: a long description is cut, a barcode that is no GTIN left out', async (t) => {
  const server = await startFeedServer(t);
  const long = '\u{1F600}'.repeat(5001);
  const json = JSON.stringify([
    { id: 'A', title: 'A', price: '1 USD', description: long, gtin: '4006381333932' },
    { id: 'B', title: 'B', price: '1 USD', gtin: '4006381333931' },
  ]);
  const [a, b] = products(await read(server, '/lossy.json', json));
  t.equal(a!.description, '\u{1F600}'.repeat(5000), '5000 characters (code points)');
  t.notOk('gtin' in a!.attributes!, 'a bad check digit');
  t.equal(b!.attributes!.gtin, '4006381333931');
});

t.test('a stopped sync stops reading, and closes the connection', async (t) => {
  const server = await startFeedServer(t);
  server.generate('/big.csv', { bytes: 20 * 1024 * 1024 });
  const controller = new AbortController();
  const ctx = context({ url: server.url('/big.csv') }, { state: {} }, controller);
  let read = 0;
  await t.rejects(
    (async () => {
      for await (const item of feedSource.items(ctx)) {
        if (item.kind === 'product' && ++read === 10) controller.abort();
      }
    })(),
    { name: 'SourceError', message: 'the sync was stopped' },
  );
  t.equal(read, 10);
  t.equal(await server.requests[0]!.closed, false, 'the rest of the feed was never sent');
});

t.test('readFeedSettings names the setting and the problem', async (t) => {
  t.same(readFeedSettings({ url: ' https://x.example/f.csv ' }), {
    url: 'https://x.example/f.csv',
    maxBytes: 200 * 1024 * 1024,
    format: undefined,
    timeoutMs: undefined,
  });
  t.match(readFeedSettings({ url: 'https://x', max_bytes: 10, format: 'xml', timeout_ms: 5 }), {
    maxBytes: 10,
    format: 'xml',
    timeoutMs: 5,
  });
  for (const [settings, message] of [
    [{}, /settings\.url is required/],
    [{ url: 42 }, /settings\.url is required/],
    [{ url: 'https://x', max_bytes: '5' }, /settings\.max_bytes must be a whole number/],
    [{ url: 'https://x', max_bytes: 0 }, /settings\.max_bytes/],
    [
      { url: 'https://x', format: 'xlsx' },
      /settings\.format must be csv, tsv, json, ndjson or xml/,
    ],
    [{ url: 'https://x', timeout_ms: 1.5 }, /settings\.timeout_ms/],
  ] as const)
    t.throws(() => readFeedSettings(settings), { name: 'SourceError', kind: 'invalid', message });
});

t.test('a column given twice keeps both values (additional images in a TSV)', async (t) => {
  const server = await startFeedServer(t);
  const tsv = [
    'id\ttitle\tprice\timage_link\tadditional_image_link\tadditional_image_link',
    'A\tLamp\t30.00 USD\thttps://img.example.com/1.jpg\thttps://img.example.com/2.jpg\thttps://img.example.com/3.jpg',
  ].join('\n');
  const [lamp] = products(await read(server, '/twice.tsv', tsv));
  t.same(lamp!.images, [
    'https://img.example.com/1.jpg',
    'https://img.example.com/2.jpg',
    'https://img.example.com/3.jpg',
  ]);
});
