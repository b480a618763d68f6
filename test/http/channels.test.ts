/**
 * Channel profiles through the API and the pipeline: the definition rules (format and
 * compression per platform, settings), the preview, and the files each profile publishes,
 * compared with golden files (test/fixtures/channels/) and checked by each platform's own
 * rules: OpenAI's required fields, the ACP schema with ajv, RSS with xmllint, TSV's shape.
 * AGENTSHELF_UPDATE_GOLDEN=1 rewrites the golden files from this run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { parse } from 'csv-parse/sync';
import { clockAt, type TestClock } from '../support/clock.js';
import { createFeed, feedPath, runFeeds } from '../support/feeds.js';
import { loadAcpProductValidator, repoRoot } from '../support/discovery.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const GOLDEN = path.join(repoRoot(), 'test', 'fixtures', 'channels');
const UPDATE = process.env.AGENTSHELF_UPDATE_GOLDEN === '1';

const page = (id: string) => `https://shop.example/p/${id.toLowerCase()}`;
const image = (id: string, n = 1) => `https://img.example.com/${id.toLowerCase()}-${n}.jpg`;

/** The fixed catalogue every profile maps: variants, exclusions, escaping, Google's extras. */
const CATALOGUE: Record<string, unknown>[] = [
  {
    id: 'SHOE-9',
    name: 'Trail Shoe - 9',
    description: 'A light trail shoe.',
    images: [image('SHOE-9'), image('SHOE-9', 2)],
    attributes: {
      brand: 'Northwind',
      url: page('SHOE-9'),
      gtin: '4006381333931',
      condition: 'new',
      item_group_id: 'SHOE',
      size: '9',
      color: 'Black',
    },
  },
  {
    id: 'SHOE-10',
    name: 'Trail Shoe - 10',
    description: 'A light trail shoe.',
    images: [image('SHOE-10')],
    attributes: { brand: 'Northwind', url: page('SHOE-10'), item_group_id: 'SHOE', size: '10' },
  },
  {
    id: 'MUG-1',
    name: 'Enamel Mug',
    description: 'Holds "coffee", tea\tand more,\nfor camp & home <3.',
    price: 12.5,
    images: [image('MUG-1')],
    attributes: {
      brand: 'Campfire',
      url: page('MUG-1'),
      availability: 'preorder',
      mpn: 'CF-MUG',
      native_commerce: true,
      merchant_item_id: 'CHK-MUG-1',
      consumer_notice: { type: 'prop_65', message: 'May contain <b>lead</b>: see the label.' },
    },
  },
  {
    id: 'NOIMG-1',
    name: 'Lantern',
    description: 'Bright.',
    images: [],
    attributes: { brand: 'Campfire', url: page('NOIMG-1') },
  },
  {
    id: 'NOPAGE-1',
    name: 'Tent Stake',
    description: 'Steel.',
    images: [image('NOPAGE-1')],
    attributes: { brand: 'Campfire' },
  },
  {
    id: 'CAFE-1',
    name: 'Café ☕ Blend',
    description: 'Whole beans.',
    price: 9,
    images: [image('CAFE-1')],
    attributes: { url: page('CAFE-1'), enable_checkout: true },
  },
];

/** Product ids each profile leaves out (a platform would refuse them). */
const EXCLUDED: Record<string, string[]> = {
  openai: ['NOIMG-1', 'NOPAGE-1'],
  google: ['NOIMG-1', 'NOPAGE-1'],
  stripe: ['NOIMG-1', 'NOPAGE-1'],
  acp: [],
};

const FEEDS = [
  { profile: 'openai', format: 'jsonl' },
  { profile: 'openai', format: 'csv' },
  { profile: 'openai', format: 'tsv', compression: 'gzip' },
  { profile: 'google', format: 'xml' },
  { profile: 'google', format: 'tsv' },
  { profile: 'acp', format: 'jsonl' },
  { profile: 'acp', format: 'json' },
  { profile: 'stripe', format: 'csv' },
] as const;

/** Products created a second apart: the feeds' order (creation time, then id) is fixed. */
async function seedCatalogue(s: TestServer, clock: TestClock) {
  for (const p of CATALOGUE) {
    clock.advance(1);
    const res = await s.request('POST', '/v1/products', { body: productBody(p) });
    if (res.status !== 201) throw new Error(res.text);
  }
}

/** A generated file's text (gunzipped when the feed is gzipped). */
function fileText(s: TestServer, id: string, format: string, gzip: boolean): string {
  const file = feedPath(s, id, format);
  return gzip
    ? zlib.gunzipSync(fs.readFileSync(`${file}.gz`)).toString('utf8')
    : fs.readFileSync(file, 'utf8');
}

function golden(t: Test, name: string, text: string) {
  const file = path.join(GOLDEN, name);
  if (UPDATE) {
    fs.mkdirSync(GOLDEN, { recursive: true });
    fs.writeFileSync(file, text);
  }
  t.equal(text, fs.readFileSync(file, 'utf8'), `${name} is the golden file`);
}

const OPENAI_REQUIRED = [
  'item_id',
  'title',
  'description',
  'url',
  'brand',
  'seller_name',
  'image_url',
  'availability',
  'price',
  'target_countries',
  'store_country',
  'is_eligible_search',
  'is_eligible_checkout',
];

/** OpenAI's rules for every row: the required fields, their enums and lengths. */
function checkOpenAiRow(t: Test, row: Record<string, unknown>) {
  for (const f of OPENAI_REQUIRED)
    t.ok(row[f] !== undefined && row[f] !== '', `${row.item_id}: ${f}`);
  t.match(row.availability, /^(in_stock|out_of_stock|pre_order|backorder|unknown)$/);
  t.match(row.price, /^\d+\.\d{2} [A-Z]{3}$/);
  t.ok(String(row.title).length <= 150 && String(row.item_id).length <= 100);
  t.match(row.is_eligible_search, /^(true|false)$/);
}

t.test('each profile publishes its golden file, valid by its platform', async (t) => {
  const clock = clockAt('2026-11-27T06:00:00.000Z');
  const s = await startTestServer(
    t,
    { STORE_NAME: 'Acme Store', STORE_COUNTRY: 'US' },
    { now: clock.now },
  );
  await seedCatalogue(s, clock);
  const feeds = [];
  for (const f of FEEDS) {
    const body = {
      name: `${f.profile} ${f.format}`,
      ...f,
      ...(f.profile === 'openai' ? { settings: { target_countries: ['US', 'CA'] } } : {}),
    };
    feeds.push({ ...f, feed: await createFeed(s, body) });
  }
  t.equal((await runFeeds(s)).status, 'succeeded');
  const validateAcp = loadAcpProductValidator();
  for (const { profile, format, feed, ...rest } of feeds) {
    const gzip = 'compression' in rest;
    const text = fileText(s, feed.id, format, gzip);
    golden(t, `${profile}.${format}`, text);
    const got = (await s.request('GET', `/v1/feeds/${feed.id}`)).body;
    const included = CATALOGUE.length - EXCLUDED[profile]!.length;
    t.match(got, { status: 'active', profile, product_count: included });
    t.equal(got.diagnostics.excluded, EXCLUDED[profile]!.length, `${profile} excluded`);
    if (profile === 'openai' && format === 'jsonl') {
      const rows = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      t.equal(rows.length, included);
      for (const row of rows) checkOpenAiRow(t, row);
      t.same(rows[0].target_countries, ['US', 'CA']);
    }
    if (format === 'csv' || format === 'tsv') {
      const rows: Record<string, string>[] = parse(text, {
        columns: true,
        delimiter: format === 'tsv' ? '\t' : ',',
        quote: format === 'tsv' ? false : '"',
      });
      t.equal(rows.length, included, `${profile}.${format} rows`);
      if (profile === 'openai') for (const row of rows) checkOpenAiRow(t, row);
    }
    if (profile === 'acp') {
      const products =
        format === 'json'
          ? JSON.parse(text).products
          : text
              .trimEnd()
              .split('\n')
              .map((l) => JSON.parse(l));
      t.same(
        products.map((p: { id: string }) => p.id),
        ['CAFE-1', 'MUG-1', 'NOIMG-1', 'NOPAGE-1', 'SHOE'],
        'one Product per variant group, in group order',
      );
      for (const p of products) t.ok(validateAcp(p), JSON.stringify(validateAcp.errors));
    }
    if (format === 'xml') {
      const file = feedPath(s, feed.id, 'xml');
      const lint = spawnSync('xmllint', ['--noout', file], { encoding: 'utf8' });
      t.equal(lint.status, 0, `xmllint accepts the RSS: ${lint.stderr}`);
      t.match(text, '<g:consumer_notice><g:consumer_notice_type>prop_65</g:consumer_notice_type>');
      t.match(text, '<g:native_commerce>true</g:native_commerce>');
    }
  }
});

t.test('a gzipped feed exports its .gz file itself', async (t) => {
  const clock = clockAt('2026-11-27T06:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  await seedCatalogue(s, clock);
  const feed = await createFeed(s, {
    name: 'ChatGPT',
    profile: 'openai',
    format: 'jsonl',
    compression: 'gzip',
  });
  await runFeeds(s);
  const res = await fetch(`${s.url}/v1/feeds/${feed.id}/export`, {
    headers: { authorization: `Bearer ${s.keys.read_only}`, 'accept-encoding': 'identity' },
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/gzip');
  t.equal(res.headers.get('content-encoding'), null);
  t.match(res.headers.get('content-disposition'), /\.jsonl\.gz/);
  const text = zlib.gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8');
  t.equal(text.trimEnd().split('\n').length, CATALOGUE.length - 2);
});

t.test('the definition: formats, compression and settings the platform takes', async (t) => {
  const s = await startTestServer(t);
  const post = (body: Record<string, unknown>) => s.request('POST', '/v1/feeds', { body });
  const xml = await post({ name: 'x', profile: 'openai', format: 'xml' });
  t.equal(xml.status, 422);
  t.match(xml.body.error, { code: 'invalid_parameter' });
  t.match(xml.text, /format/);
  const gz = await post({ name: 'x', profile: 'stripe', format: 'csv', compression: 'gzip' });
  t.equal(gz.status, 422);
  t.match(gz.text, /compression/);
  const country = await post({
    name: 'x',
    profile: 'openai',
    format: 'jsonl',
    settings: { store_country: 'usa' },
  });
  t.equal(country.status, 422);
  t.match(country.text, /settings\.store_country/);
  const plain = await post({ name: 'today', format: 'csv' });
  t.equal(plain.status, 201);
  t.match(plain.body, { profile: 'agentshelf', compression: null, settings: {} });
  const switched = await s.request('PUT', `/v1/feeds/${plain.body.id}`, {
    body: { profile: 'google' },
  });
  t.equal(switched.status, 422, 'google does not take csv');
  t.match(switched.text, /format/);
  const moved = await s.request('PUT', `/v1/feeds/${plain.body.id}`, {
    body: { profile: 'google', format: 'tsv', settings: { seller_name: 'Acme' } },
  });
  t.equal(moved.status, 200);
  t.match(moved.body, { profile: 'google', format: 'tsv', status: 'processing' });
  t.same(moved.body.settings, { seller_name: 'Acme' });
  const listed = await s.request('GET', '/v1/feeds?profile=google');
  t.same(
    listed.body.feeds.map((f: { id: string }) => f.id),
    [plain.body.id],
  );
});

t.test('the preview counts what the next generation would carry, and sends nothing', async (t) => {
  const clock = clockAt('2026-11-27T06:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  await seedCatalogue(s, clock);
  for (let i = 0; i < 25; i++) {
    clock.advance(1);
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id: `BARE-${String(i).padStart(2, '0')}`, images: [] }),
    });
    if (res.status !== 201) throw new Error(res.text);
  }
  const feed = await createFeed(s, { name: 'ChatGPT', profile: 'openai', format: 'jsonl' });
  const res = await s.request('GET', `/v1/feeds/${feed.id}/preview`);
  t.equal(res.status, 200);
  const p = res.body;
  t.match(p, {
    feed_id: feed.id,
    profile: 'openai',
    format: 'jsonl',
    products: CATALOGUE.length + 25,
    included: CATALOGUE.length - 2,
    excluded: 27,
    records: CATALOGUE.length - 2,
  });
  t.same(
    p.excluded_by_reason.map((r: { code: string; count: number }) => [r.code, r.count]),
    [
      ['description.missing', 25],
      ['image_url.missing', 1],
      ['url.missing', 1],
    ],
    'each excluded product once, under its first error',
  );
  t.equal(p.excluded_by_reason[0].product_ids.length, 20, 'up to 20 ids a reason');
  t.same(p.excluded_by_reason[1].product_ids, ['NOIMG-1']);
  t.same(p.excluded_by_reason[2].product_ids, ['NOPAGE-1']);
  t.match(p.invalid_by_field, { url: { missing: 26 }, image_url: { missing: 26 } });
  t.equal(fs.existsSync(path.join(s.config.DATA_DIR, 'feeds')), false, 'nothing written');
  const still = await s.request('GET', `/v1/feeds/${feed.id}`);
  t.match(still.body, { status: 'processing', product_count: 0 });
  const missing = await s.request('GET', '/v1/feeds/feed_nope/preview');
  t.equal(missing.status, 404);
});
