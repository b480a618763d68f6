import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { updateProduct } from '../../src/domain/products/products.js';
import { seedDemo } from '../../src/seed/demo.js';
import {
  addProduct,
  diffTrees,
  loadAcpProductValidator,
  snapshotTree,
} from '../support/discovery.js';
import { createClock, createPipelineContext, startTestStore } from '../support/pipeline.js';

function readJson(root: string, file: string): any {
  return JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));
}

function ndjsonLines(root: string, file: string): any[] {
  return fs
    .readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

t.test('every published product validates against the ACP 2026-04-17 Product schema', async (t) => {
  const s = await startTestStore(t);
  await seedDemo(s.db, { currency: 'USD' });
  // Edges: no brand, no description, a zero-decimal currency, an odd but valid URL, no image.
  await addProduct(s.db, { id: 'bare', name: 'Bare', price: 1, images: [] });
  await addProduct(s.db, {
    name: 'Yen thing',
    price: 500,
    currency: 'JPY',
    description: '',
    attributes: {
      brand: 'Tokyo Goods',
      url: 'https://shop.example.jp/p/a b"c',
      inventory_quantity: 0,
    },
  });
  const ctx = createPipelineContext(t, s.store, s.config);
  const result = await publishDiscovery(ctx);
  t.same(result.failures, []);
  const validate = loadAcpProductValidator();
  const root = s.config.PUBLIC_DIR;
  const index = readJson(root, 'v1/index.json');
  t.equal(index.acp_version, '2026-04-17');
  t.ok(index.brands.length >= 5);
  let checked = 0;
  for (const brand of index.brands) {
    const lines = ndjsonLines(root, `v1/feeds/${brand.slug}/products.ndjson`);
    const json = readJson(root, `v1/feeds/${brand.slug}/products.json`);
    t.same(
      json.products,
      lines,
      `${brand.slug}: the JSON and NDJSON feeds carry the same products`,
    );
    t.same(json.metadata, { id: brand.slug, updated_at: brand.updated_at });
    for (const product of lines) {
      if (!validate(product)) t.fail(`${product.id}: ${JSON.stringify(validate.errors)}`);
      checked++;
    }
    const variants = lines.reduce((n, p) => n + p.variants.length, 0);
    t.equal(variants, brand.product_count, `${brand.slug}: one variant per active product`);
  }
  t.ok(checked > 20, `validated ${checked} products`);
  const yen = ndjsonLines(root, 'v1/feeds/tokyo-goods/products.ndjson')[0];
  t.same(yen.variants[0].price, { amount: 500, currency: 'JPY' }, 'prices in minor units');
  t.same(yen.variants[0].availability, { available: false, status: 'out_of_stock' });
  t.equal(yen.url, 'https://shop.example.jp/p/a%20b%22c', 'URLs are published normalised');
});

t.test(
  'validator rejects a product the schema forbids, so the validation test can fail',
  async (t) => {
    const validate = loadAcpProductValidator();
    t.notOk(
      validate({
        id: 'x',
        variants: [{ id: 'v', title: 't', price: { amount: 1.5, currency: 'USD' } }],
      }),
    );
    t.notOk(validate({ id: 'x', variants: [{ id: 'v', title: 't', url: 'not a uri' }] }));
    t.notOk(validate({ id: 'x', variants: [], extra: 1 }));
    t.ok(validate({ id: 'x', variants: [{ id: 'v', title: 't' }] }));
  },
);

t.test('products sharing item_group_id are the variants of one ACP product', async (t) => {
  const s = await startTestStore(t);
  for (const size of ['9', '10', '11']) {
    await addProduct(s.db, {
      id: `TRAIL-${size}`,
      name: `Trail Shoe - ${size}`,
      attributes: { brand: 'Northwind', item_group_id: 'TRAIL', size },
    });
  }
  await addProduct(s.db, { id: 'SOLO', name: 'Solo Cap', attributes: { brand: 'Northwind' } });
  await addProduct(s.db, {
    id: 'HIDDEN',
    name: 'Draft',
    status: 'draft',
    attributes: { brand: 'Northwind' },
  });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const lines = ndjsonLines(s.config.PUBLIC_DIR, 'v1/feeds/northwind/products.ndjson');
  t.same(
    lines.map((p) => [p.id, p.title, p.variants.map((v: any) => v.id)]),
    [
      ['SOLO', 'Solo Cap', ['SOLO']],
      ['TRAIL', 'Trail Shoe', ['TRAIL-10', 'TRAIL-11', 'TRAIL-9']],
    ],
    'draft products are not published',
  );
  t.same(lines[1].variants[0].variant_options, [{ name: 'Size', value: '10' }]);
  const brand = readJson(s.config.PUBLIC_DIR, 'v1/brands/northwind.json');
  t.match(brand, { product_count: 4, acp_product_count: 2, name: 'Northwind', slug: 'northwind' });
});

t.test(
  'products without a brand are published under STORE_NAME, with those naming it',
  async (t) => {
    const s = await startTestStore(t, { STORE_NAME: 'Corner Shop' });
    await addProduct(s.db, { id: 'a', name: 'Unbranded' });
    await addProduct(s.db, { id: 'b', name: 'Own label', attributes: { brand: 'Corner Shop' } });
    await publishDiscovery(createPipelineContext(t, s.store, s.config));
    const index = readJson(s.config.PUBLIC_DIR, 'v1/index.json');
    t.same(
      index.brands.map((b: any) => [b.slug, b.name, b.product_count]),
      [['corner-shop', 'Corner Shop', 2]],
    );
    const lines = ndjsonLines(s.config.PUBLIC_DIR, 'v1/feeds/corner-shop/products.ndjson');
    t.same(
      lines.map((p) => p.id),
      ['a', 'b'],
    );
    t.equal(lines[0].variants[0].seller.name, 'Corner Shop');
  },
);

t.test('brands whose names give the same slug get distinct slugs that stay', async (t) => {
  const s = await startTestStore(t);
  const clock = createClock();
  const ctx = createPipelineContext(t, s.store, s.config, { now: clock.now });
  await addProduct(s.db, { id: 'p1', name: 'One', attributes: { brand: 'Acme Inc' } });
  await addProduct(s.db, { id: 'p2', name: 'Two', attributes: { brand: 'ACME, Inc.' } });
  await addProduct(s.db, { id: 'p3', name: 'Three', attributes: { brand: 'Café Olé' } });
  await addProduct(s.db, { id: 'p4', name: 'Four', attributes: { brand: '東京' } });
  await publishDiscovery(ctx);
  const slugs = () =>
    Object.fromEntries(
      readJson(s.config.PUBLIC_DIR, 'v1/index.json').brands.map((b: any) => [b.name, b.slug]),
    );
  const first = slugs();
  t.equal(first['ACME, Inc.'], 'acme-inc');
  t.equal(first['Acme Inc'], 'acme-inc-2');
  t.equal(first['Café Olé'], 'cafe-ole');
  t.match(first['東京'], /^brand-[0-9a-f]{8}$/);

  // A newcomer with the same slug takes the next free one; the others keep theirs.
  await addProduct(s.db, { id: 'p5', name: 'Five', attributes: { brand: 'acme inc' } });
  await publishDiscovery(ctx);
  t.same(slugs(), { ...first, 'acme inc': 'acme-inc-3' });

  // A brand that leaves and comes back gets its slug back; nobody else took it meanwhile.
  await updateProduct(s.db, 'p2', { status: 'inactive' });
  await publishDiscovery(ctx);
  t.equal(slugs()['ACME, Inc.'], undefined);
  t.notOk(fs.existsSync(path.join(s.config.PUBLIC_DIR, 'v1/feeds/acme-inc')), 'its files are gone');
  t.equal(slugs()['Acme Inc'], 'acme-inc-2');
  await updateProduct(s.db, 'p2', { status: 'active' });
  await publishDiscovery(ctx);
  t.equal(slugs()['ACME, Inc.'], 'acme-inc');
});

t.test('changing one product rebuilds only its brand and the index', async (t) => {
  const s = await startTestStore(t);
  const clock = createClock();
  const ctx = createPipelineContext(t, s.store, s.config, { now: clock.now });
  for (const brand of ['Alpha', 'Beta', 'Gamma']) {
    for (let i = 0; i < 3; i++) {
      await addProduct(
        s.db,
        { id: `${brand}-${i}`, name: `${brand} ${i}`, price: 10 + i, attributes: { brand } },
        clock.now(),
      );
    }
  }
  const first = await publishDiscovery(ctx);
  t.match(first.summary[0], /3 brands, 9 products; rebuilt 3/);
  const root = s.config.PUBLIC_DIR;
  const before = snapshotTree(root);

  clock.advance(60);
  const again = await publishDiscovery(ctx);
  t.match(again.summary[0], /rebuilt 0, removed 0, 0 files changed, index unchanged/);
  t.same(diffTrees(before, snapshotTree(root)), [], 'a run with no change touches no file');

  clock.advance(60);
  await updateProduct(s.db, 'Beta-1', { price: 99 }, clock.now());
  const third = await publishDiscovery(ctx);
  t.match(third.summary[0], /rebuilt 1/);
  const changed = diffTrees(before, snapshotTree(root));
  const beta = [
    'v1/brands/beta.json',
    'v1/brands/beta/index.html',
    'v1/feeds/beta/products.json',
    'v1/feeds/beta/products.ndjson',
  ].flatMap((f) => [f, `${f}.br`, `${f}.gz`]);
  t.same(
    changed.filter((f) => f !== '.published'),
    // The sitemap dates each page by day, as the page does: the same day, it keeps its bytes.
    [...beta, 'v1/index.json', 'v1/index.json.br', 'v1/index.json.gz'].sort(),
    'only the brand of the changed product and the index were replaced',
  );
  t.ok(changed.includes('.published'), 'the marker tells servers to look again');
  const index = readJson(root, 'v1/index.json');
  t.equal(index.generated_at, clock.now().toISOString());
  t.equal(index.brands.find((b: any) => b.slug === 'beta').updated_at, clock.now().toISOString());
});

t.test('a brand whose published files were removed by hand is rebuilt', async (t) => {
  const s = await startTestStore(t);
  const ctx = createPipelineContext(t, s.store, s.config);
  await addProduct(s.db, { name: 'Lamp', attributes: { brand: 'Lumen' } });
  await publishDiscovery(ctx);
  fs.rmSync(path.join(s.config.PUBLIC_DIR, 'v1/feeds/lumen/products.ndjson'));
  const r = await publishDiscovery(ctx);
  t.match(r.summary[0], /rebuilt 1/);
  t.ok(fs.existsSync(path.join(s.config.PUBLIC_DIR, 'v1/feeds/lumen/products.ndjson')));
});

t.test('the serving rules for CDNs and nginx are written beside the tree', async (t) => {
  const s = await startTestStore(t, { FEEDS_PORT: '18081' });
  await addProduct(s.db, { name: 'Lamp', attributes: { brand: 'Lumen' } });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const headers = fs.readFileSync(path.join(s.config.PUBLIC_DIR, '_headers'), 'utf8');
  t.match(
    headers,
    /\/v1\/feeds\/:brand\/products\.ndjson\n( {2}.+\n)* {2}Content-Type: application\/x-ndjson/,
  );
  t.match(
    headers,
    /\/v1\/index\.json\n( {2}.+\n)* {2}Cache-Control: public, max-age=60, stale-while-revalidate=600/,
  );
  const redirects = fs.readFileSync(path.join(s.config.PUBLIC_DIR, '_redirects'), 'utf8');
  t.match(redirects, '/v1/brands/lumen /v1/brands/lumen.json 200');
  const nginx = fs.readFileSync(path.join(s.config.DATA_DIR, 'nginx', 'discovery.conf'), 'utf8');
  t.match(nginx, 'listen 127.0.0.1:18081;');
  t.match(nginx, `root "${s.config.PUBLIC_DIR}";`);
  t.match(nginx, '{ seconds = 60, max = 60,');
});
