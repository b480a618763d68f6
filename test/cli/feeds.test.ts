import t from 'tap';
import { runCliAsync } from '../support/cli.js';
import { createFeed } from '../support/feeds.js';
import { productBody, startTestServer } from '../support/server.js';

t.test('feeds --help, and usage errors', async (t) => {
  const help = await runCliAsync(['feeds', '--help']);
  t.equal(help.status, 0);
  t.match(help.stdout, /feeds preview ID/);
  const bare = await runCliAsync(['feeds', 'preview']);
  t.equal(bare.status, 2);
  t.match(bare.stderr, /needs the feed id/);
  const unknown = await runCliAsync(['feeds', 'frobnicate']);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown feeds command/);
});

t.test('feeds preview gives the API preview, from the store', async (t) => {
  const s = await startTestServer(t);
  for (const [id, images] of [
    ['GOOD-1', ['https://img.example.com/g.jpg']],
    ['BARE-1', []],
  ] as const) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({
        id,
        description: 'Described.',
        images,
        attributes: { brand: 'Northwind', url: `https://shop.example/${id}` },
      }),
    });
    if (res.status !== 201) throw new Error(res.text);
  }
  const feed = await createFeed(s, { name: 'Stripe', profile: 'stripe', format: 'csv' });
  const url = s.config.DATABASE_URL;
  const env = { DATA_DIR: s.dir, ...(url ? { DATABASE_URL: url } : {}) };
  const json = await runCliAsync(['feeds', 'preview', feed.id, '--json'], env);
  t.equal(json.status, 0, json.stderr);
  const api = await s.request('GET', `/v1/feeds/${feed.id}/preview`);
  t.same(JSON.parse(json.stdout), api.body);
  t.match(api.body, { products: 2, included: 1, excluded: 1 });
  const text = await runCliAsync(['feeds', 'preview', feed.id], env);
  t.equal(text.status, 0);
  t.match(text.stdout, `${feed.id} (stripe, csv): 2 products, 1 included, 1 excluded`);
  t.match(text.stdout, /image_link\.missing\t1\tno image\tBARE-1/);
  const missing = await runCliAsync(['feeds', 'preview', 'feed_nope'], env);
  t.equal(missing.status, 1);
  t.match(missing.stderr, /feed_nope/);
});
