import fs from 'node:fs';
import t from 'tap';
import { createFeed, feedPath, runFeeds } from '../support/feeds.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const CATALOGUE: [id: string, category: string | null, status: string][] = [
  ['shoe-run', 'Apparel > Shoes > Running', 'active'],
  ['shoe-walk', 'Apparel > Shoes', 'active'],
  ['shoe-draft', 'Apparel > Shoes', 'draft'],
  ['shirt', 'Apparel > Tops', 'active'],
  ['apparelx', 'Apparelx', 'active'],
  ['lamp', 'Home > Lighting', 'active'],
  ['lamp-old', 'Home > Lighting', 'inactive'],
  ['nocat', null, 'active'],
];

async function idsOf(s: TestServer, body: Record<string, unknown>): Promise<string[]> {
  const feed = await createFeed(s, { name: 'F', format: 'json', ...body });
  await runFeeds(s);
  const file = JSON.parse(fs.readFileSync(feedPath(s, feed.id, 'json'), 'utf8')) as {
    products: { id: string }[];
  };
  const got = (await s.request('GET', `/v1/feeds/${feed.id}`)).body;
  if (got.product_count !== file.products.length) throw new Error('product_count differs');
  return file.products.map((p) => p.id);
}

t.test('feeds select by product list, category prefix and status', async (t) => {
  const s = await startTestServer(t);
  for (const [id, category, status] of CATALOGUE) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id, category, status }),
    });
    t.equal(res.status, 201);
  }
  t.same(
    await idsOf(s, {}),
    ['shoe-run', 'shoe-walk', 'shirt', 'apparelx', 'lamp', 'nocat'],
    'no filter: every active product, in creation order',
  );
  t.same(
    await idsOf(s, { filters: { category: 'Apparel' } }),
    ['shoe-run', 'shoe-walk', 'shirt'],
    'a category matches itself and below, not Apparelx',
  );
  t.same(await idsOf(s, { filters: { category: 'Apparel > Shoes' } }), ['shoe-run', 'shoe-walk']);
  t.same(await idsOf(s, { filters: { category: 'Apparel>Shoes>Running' } }), ['shoe-run']);
  t.same(await idsOf(s, { filters: { status: 'draft' } }), ['shoe-draft']);
  t.same(await idsOf(s, { filters: { status: 'inactive' } }), ['lamp-old']);
  t.same(
    await idsOf(s, { filters: { category: 'Apparel > Shoes', status: 'draft' } }),
    ['shoe-draft'],
    'category and status together',
  );
  t.same(
    await idsOf(s, { products: ['lamp', 'shoe-draft', 'lamp-old', 'shirt'] }),
    ['shirt', 'lamp'],
    'a product list without filters.status carries its active products only',
  );
  t.same(
    await idsOf(s, { products: ['lamp', 'lamp-old', 'shirt'], filters: { status: 'inactive' } }),
    ['lamp-old'],
  );
  t.same(
    await idsOf(s, { products: ['lamp', 'shoe-run', 'shirt'], filters: { category: 'Apparel' } }),
    ['shoe-run', 'shirt'],
    'list and category together',
  );
  t.same(await idsOf(s, { filters: { category: 'Garden' } }), [], 'nothing matches: an empty feed');

  const listed = await createFeed(s, { name: 'L', format: 'json', products: ['shirt', 'lamp'] });
  await s.request('DELETE', '/v1/products/lamp');
  await runFeeds(s);
  const after = JSON.parse(fs.readFileSync(feedPath(s, listed.id, 'json'), 'utf8'));
  t.same(
    after.products.map((p: { id: string }) => p.id),
    ['shirt'],
    'a deleted product leaves the feed',
  );
  t.same(
    (await s.request('GET', `/v1/feeds/${listed.id}`)).body.products,
    ['lamp', 'shirt'],
    'the definition keeps the id (a product created again with it comes back)',
  );
});
