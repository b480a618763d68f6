/**
 * A feed of many pages (issue 22): the catalogue is read 250 products a page (a grouped
 * profile in chunks of a stream) and written in 1 MiB pieces, so a variant group that spans
 * pages, and a file of several pieces, must come out as one read of the whole would give them.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import t from 'tap';
import { CHANNEL_PROFILES } from '../../src/domain/feeds/channels/index.js';
import { FEED_PAGE, readFeedPages } from '../../src/domain/feeds/channels/mapping.js';
import { createFeed, feedPath, runFeeds } from '../support/feeds.js';
import { startTestServer } from '../support/server.js';

/** Products, in creation order; about one in five alone, the others in 12 groups. */
const PRODUCTS = 3 * FEED_PAGE + 17;
const idOf = (i: number) => `p${String(i).padStart(4, '0')}`;
const groupOf = (i: number) =>
  i % 5 === 0 ? undefined : `g${String((i * 7) % 12).padStart(2, '0')}`;

/** Product `i` of a test catalogue: its id, name and price from `i`, the rest given. */
const productRow = (
  i: number,
  rest: { description: string; images: string; attributes: string; created_at: string },
) => ({
  id: idOf(i),
  name: `Product ${i}`,
  price_minor: 100 + i,
  currency: 'USD',
  status: 'active' as const,
  category: 'Home',
  brand: 'Acme',
  updated_at: rest.created_at,
  ...rest,
});

async function insertProducts(
  s: Awaited<ReturnType<typeof startTestServer>>,
  rows: ReturnType<typeof productRow>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    await s.server.store.db
      .insertInto('products')
      .values(rows.slice(i, i + 200))
      .execute();
  }
}

t.test('groups that span pages come out whole, and a file of many pieces whole', async (t) => {
  const s = await startTestServer(t);
  const start = Date.parse('2026-11-28T00:00:00.000Z');
  // Long descriptions: the file is several 1 MiB pieces.
  const description = 'A product of the synthetic catalogue. '.repeat(120);
  const rows = Array.from({ length: PRODUCTS }, (_, i) => {
    // Three products a second: products created at the same time sit on both sides of a
    // page's end (249 and 250...), so the next page starts after the id as well as the time.
    const stamp = new Date(start + Math.floor(i / 3) * 1000).toISOString();
    const group = groupOf(i);
    return productRow(i, {
      description,
      images: JSON.stringify([`https://img.example.com/${idOf(i)}.jpg`]),
      attributes: JSON.stringify({
        brand: 'Acme',
        url: `https://shop.example.com/${idOf(i)}`,
        ...(group ? { item_group_id: group, size: String(i) } : {}),
      }),
      created_at: stamp,
    });
  });
  await insertProducts(s, rows);
  const acp = await createFeed(s, { name: 'Agents', profile: 'acp', format: 'jsonl' });
  const openai = await createFeed(s, {
    name: 'ChatGPT',
    profile: 'openai',
    format: 'jsonl',
    compression: 'gzip',
  });
  const run = await runFeeds(s);
  t.same(run.failures, []);

  // acp: one record per group key (the group id, else the product's own id), in that order,
  // each with every variant of the group in id order.
  const expected = new Map<string, string[]>();
  for (let i = 0; i < PRODUCTS; i++) {
    const key = groupOf(i) ?? idOf(i);
    expected.set(key, [...(expected.get(key) ?? []), idOf(i)]);
  }
  const keys = [...expected.keys()].sort();
  const acpText = fs.readFileSync(feedPath(s, acp.id, 'jsonl'), 'utf8');
  const records = acpText
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: string; variants: { id: string }[] });
  t.same(
    records.map((r) => r.id),
    keys,
    'one record per group, in group order',
  );
  t.same(
    records.map((r) => r.variants.map((v) => v.id)),
    keys.map((k) => expected.get(k)!.sort()),
    'every variant of a group in its one record, whatever page it was read on',
  );
  let read = 0;
  let spanning = 0;
  for (const k of keys) {
    const first = read;
    read += expected.get(k)!.length;
    if (Math.floor(first / FEED_PAGE) !== Math.floor((read - 1) / FEED_PAGE)) spanning++;
  }
  t.ok(spanning >= 1, `${spanning} groups span two pages`);

  // openai: one line per product, in creation order, the .gz the same text.
  const plain = fs.readFileSync(feedPath(s, openai.id, 'jsonl'));
  t.ok(plain.length > 3 * 1024 * 1024, 'the file is several pieces');
  t.same(
    plain
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { item_id: string }).item_id),
    rows.map((r) => r.id),
  );
  t.ok(
    zlib.gunzipSync(fs.readFileSync(`${feedPath(s, openai.id, 'jsonl')}.gz`)).equals(plain),
    'the .gz holds the same bytes',
  );
});

t.test('a generation that fails mid-read leaves no page in flight behind it', async (t) => {
  // The next page (a grouped profile's next chunk) is asked for before a page is mapped: when
  // the mapping fails, the error is the read's, the page asked for fails nobody, and the
  // store reads on (on PostgreSQL the flat read's transaction is rolled back and the grouped
  // read's cursor closed, its connection back in the pool).
  const s = await startTestServer(t);
  const stamp = '2026-11-28T00:00:00.000Z';
  const rows = Array.from({ length: 3 * FEED_PAGE }, (_, i) =>
    productRow(i, {
      description: 'A product.',
      images: '[]',
      attributes: JSON.stringify(groupOf(i) ? { item_group_id: groupOf(i) } : {}),
      created_at: stamp,
    }),
  );
  await insertProducts(s, rows);
  const feed = { id: 'f', has_product_list: 0, filter_category: null, filter_status: null };
  const reader = s.server.store.openReader();
  t.teardown(() => reader.destroy());
  for (const profile of ['agentshelf', 'acp'] as const) {
    let pages = 0;
    await t.rejects(
      readFeedPages(reader, feed, CHANNEL_PROFILES[profile], () => {
        if (++pages === 2) throw new Error('the mapping failed');
      }),
      { message: 'the mapping failed' },
      `${profile}: the mapping's error`,
    );
    t.equal(pages, 2, `${profile}: no page after the failure`);
    let read = 0;
    await readFeedPages(reader, feed, CHANNEL_PROFILES[profile], (page) => {
      read += page.length;
    });
    t.equal(read, rows.length, `${profile}: the next read reads every product`);
  }
});
