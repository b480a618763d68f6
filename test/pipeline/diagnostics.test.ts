import fs from 'node:fs';
import zlib from 'node:zlib';
import t from 'tap';
import { createFeed, runFeeds } from '../support/feeds.js';
import { productBody, startTestServer } from '../support/server.js';

t.test(
  'diagnostics are summed per feed on GET and listed per product beside the feed',
  async (t) => {
    const s = await startTestServer(t);
    const good = productBody({
      id: 'good',
      description: 'Fine',
      attributes: { brand: 'B', gtin: '4006381333931', url: 'https://shop.example/good' },
    });
    const res = await s.request('POST', '/v1/products', { body: good });
    t.equal(res.status, 201);
    await s.request('POST', '/v1/products', {
      body: productBody({ id: 'bare', description: null, images: [], attributes: {} }),
    });
    // Values the API refuses can still reach the store (integrations, older data): insert directly.
    const stamp = new Date().toISOString();
    await s.server.store.db
      .insertInto('products')
      .values({
        id: 'broken',
        name: 'x'.repeat(151),
        description: 'D',
        price_minor: 0,
        currency: 'USD',
        status: 'active',
        category: 'Home',
        images: JSON.stringify(['ftp://img.example/a.jpg', 'not a url']),
        attributes: JSON.stringify({
          brand: 'B',
          gtin: '4006381333932',
          url: 'https://shop.example/broken',
          availability: 'soon',
          inventory_quantity: -1,
          condition: 'mint',
        }),
        brand: 'B',
        created_at: stamp,
        updated_at: stamp,
      })
      .execute();

    const feed = await createFeed(s, { name: 'All', format: 'csv' });
    await runFeeds(s);
    const got = (await s.request('GET', `/v1/feeds/${feed.id}`)).body;
    const byCode = Object.fromEntries(
      got.diagnostics.issues.map((i: { code: string; count: number }) => [i.code, i.count]),
    );
    t.same(byCode, {
      'description.missing': 1,
      'link.missing': 1,
      'image_link.missing': 1,
      'brand.missing': 1,
      'gtin.missing': 1,
      'title.too_long': 1,
      'image_link.invalid': 1,
      'additional_image_link.invalid': 1,
      'price.invalid': 1,
      'availability.invalid': 1,
      'inventory_quantity.invalid': 1,
      'gtin.invalid': 1,
      'condition.invalid': 1,
    });
    t.match(got.diagnostics, {
      products: 3,
      products_with_errors: 2,
      products_with_warnings: 2, // bare, and broken (an additional image)
      url: `${s.config.BASE_URL}/v1/feeds/${feed.id}/diagnostics`,
    });
    t.equal(got.diagnostics.issues[0].severity, 'error', 'errors come first');
    t.match(
      got.diagnostics.issues.find((i: { code: string }) => i.code === 'brand.missing'),
      {
        field: 'brand',
        problem: 'missing',
        severity: 'warning',
        message: 'no brand: the store name was used',
      },
    );

    const path = `${s.config.DATA_DIR}/feeds/${feed.id}.diagnostics.ndjson`;
    const file = fs.readFileSync(path, 'utf8');
    t.equal(zlib.gunzipSync(fs.readFileSync(`${path}.gz`)).toString('utf8'), file, 'and its .gz');
    const lines = file
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    t.same(
      lines.map((l) => l.id),
      ['bare', 'broken'],
      'one line per product with issues, none for a clean product',
    );
    t.same(
      lines[0].issues.map((i: { field: string; problem: string }) => `${i.field}.${i.problem}`),
      [
        'description.missing',
        'link.missing',
        'image_link.missing',
        'brand.missing',
        'gtin.missing',
      ],
    );
    const served = await s.request('GET', `/v1/feeds/${feed.id}/diagnostics`);
    t.equal(served.status, 200);
    t.equal(served.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
    t.equal(served.text, file);

    const fresh = await createFeed(s, { name: 'New', format: 'json' });
    t.equal((await s.request('GET', `/v1/feeds/${fresh.id}/diagnostics`)).status, 409);
  },
);
