import t, { type Test } from 'tap';
import { createHttpClient } from '../../src/net/http-client.js';
import { SourceError, type SourceItem } from '../../src/domain/integrations/source.js';
import { SHOPIFY_PAGE_SIZE, shopifySource } from '../../src/platforms/shopify.js';
import { DEFAULT_SHOPIFY_API_VERSION } from '../../src/platforms/shopify-admin.js';
import { gtin13 } from '../support/platform-catalogue.js';
import {
  startShopifyServer,
  webhookProduct,
  type ShopProduct,
  type ShopifyServerOptions,
} from '../support/shopify-server.js';
import {
  acceptedByProductSchema,
  collect,
  productsById,
  sourceHarness,
  type HarnessOptions,
} from '../support/source-context.js';
import { clockAt } from '../support/clock.js';
import { loadConfig } from '../../src/config.js';

const EAN = gtin13(400638133393);

function linenShirt(): ShopProduct {
  return {
    id: 9001,
    title: 'Linen Shirt',
    descriptionHtml: '<p>Breezy <em>linen</em> &amp; cool.</p>',
    vendor: 'Acme',
    productType: 'Shirts',
    handle: 'linen-shirt',
    status: 'ACTIVE',
    tags: ['summer', 'linen'],
    category: 'Apparel & Accessories > Clothing > Shirts',
    images: [
      'https://cdn.shopify.example/files/linen-1.jpg',
      'https://cdn.shopify.example/files/linen-2.jpg',
    ],
    published: true,
    variants: [
      {
        id: 900101,
        title: 'Blue / M',
        sku: 'LIN-BLU-M',
        barcode: EAN,
        price: '49.90',
        compareAtPrice: '59.90',
        inventoryQuantity: 7,
        availableForSale: true,
        options: [
          { name: 'Color', value: 'Blue' },
          { name: 'Size', value: 'M' },
        ],
        image: 'https://cdn.shopify.example/files/linen-2.jpg',
      },
      {
        id: 900102,
        title: 'Blue / L',
        sku: 'LIN-BLU-L',
        barcode: '12345',
        price: '49.90',
        compareAtPrice: null,
        inventoryQuantity: -2,
        availableForSale: false,
        options: [
          { name: 'Color', value: 'Blue' },
          { name: 'Size', value: 'L' },
        ],
        image: null,
      },
    ],
  };
}

async function setup(
  t: Test,
  serverOptions: ShopifyServerOptions = {},
  harness: Partial<HarnessOptions> = {},
) {
  const clock = harness.clock ?? clockAt('2026-11-25T12:00:00Z');
  const server = await startShopifyServer({ now: clock.ms, currency: 'EUR', ...serverOptions });
  t.teardown(() => server.close());
  const h = sourceHarness({
    shopDomain: new URL(server.origin).host,
    credentials: { access_token: 'shpat_local_test_token' },
    clock,
    ...harness,
  });
  return { server, h, clock };
}

t.test('maps every field of a product with variants', async (t) => {
  const { server, h } = await setup(t);
  server.catalogue.put(linenShirt());
  const items = await collect(shopifySource, h.ctx);
  t.same(items[0], { kind: 'total', count: 2 });
  const byId = productsById(items);
  t.same(byId.get('900101'), {
    name: 'Linen Shirt - Blue / M',
    description: 'Breezy linen & cool.',
    price: '49.90',
    currency: 'EUR',
    status: 'active',
    category: 'Apparel & Accessories > Clothing > Shirts',
    images: [
      'https://cdn.shopify.example/files/linen-2.jpg',
      'https://cdn.shopify.example/files/linen-1.jpg',
    ],
    attributes: {
      item_group_id: '9001',
      brand: 'Acme',
      sku: 'LIN-BLU-M',
      gtin: EAN,
      barcode: EAN,
      handle: 'linen-shirt',
      tags: ['summer', 'linen'],
      url: 'https://shop.example/products/linen-shirt?variant=900101',
      availability: 'in_stock',
      inventory_quantity: 7,
      compare_at_price: '59.90',
      product_type: 'Shirts',
      options: { Color: 'Blue', Size: 'M' },
      color: 'Blue',
      size: 'M',
    },
  });
  const second = byId.get('900102')!;
  t.equal(second.attributes?.gtin, undefined, 'a barcode that is no GTIN is not a gtin');
  t.equal(second.attributes?.barcode, '12345', 'but is kept as the barcode');
  t.equal(second.attributes?.availability, 'out_of_stock');
  t.equal(second.attributes?.inventory_quantity, 0, 'negative stock reads as none');
  t.ok(items.filter((i) => i.kind === 'product').every(acceptedByProductSchema));
  t.same(h.state, { currency: 'EUR', store_url: 'https://shop.example' });
  const graphql = server.requests.filter((r) => r.path.includes('/graphql.json'));
  t.ok(
    graphql.every((r) => r.path === `/admin/api/${DEFAULT_SHOPIFY_API_VERSION}/graphql.json`),
    'the default API version is used',
  );
});

t.test(
  'API version: settings.api_version, else SHOPIFY_API_VERSION, else the newest stable',
  async (t) => {
    t.equal(loadConfig({}).SHOPIFY_API_VERSION, DEFAULT_SHOPIFY_API_VERSION);
    t.equal(DEFAULT_SHOPIFY_API_VERSION, '2026-10', 'the newest stable version on 2026-11-25');
    const { server } = await setup(t, { products: 1 });
    const h = sourceHarness({
      shopDomain: new URL(server.origin).host,
      credentials: { access_token: 'shpat_local_test_token' },
      settings: { api_version: '2026-07' },
    });
    await collect(shopifySource, h.ctx);
    t.ok(server.requests.some((r) => r.path === '/admin/api/2026-07/graphql.json'));
    const bad = sourceHarness({
      shopDomain: h.ctx.shopDomain,
      credentials: { access_token: 'shpat_local_test_token' },
      settings: { api_version: '2026-05' },
    });
    const err = await collect(shopifySource, bad.ctx).catch((e: unknown) => e);
    t.ok(err instanceof SourceError && err.kind === 'invalid');
    t.match((err as Error).message, /settings.api_version/);
  },
);

t.test(
  'status: ACTIVE active, DRAFT draft, ARCHIVED inactive; category falls back to the type',
  async (t) => {
    const { server, h } = await setup(t);
    const base = linenShirt();
    server.catalogue.put({
      ...base,
      id: 1,
      status: 'DRAFT',
      category: null,
      variants: [{ ...base.variants[0]!, id: 11 }],
    });
    server.catalogue.put({
      ...base,
      id: 2,
      status: 'ARCHIVED',
      variants: [{ ...base.variants[0]!, id: 21 }],
    });
    const byId = productsById(await collect(shopifySource, h.ctx));
    t.equal(byId.get('11')!.status, 'draft');
    t.equal(byId.get('11')!.category, 'Shirts');
    t.equal(byId.get('11')!.attributes?.url, undefined, 'a draft has no online store URL');
    t.equal(byId.get('21')!.status, 'inactive');
  },
);

t.test('pages by cursor within the single-query cost limit', async (t) => {
  const { server, h } = await setup(t, { products: 50 });
  const items = await collect(shopifySource, h.ctx);
  const products = items.filter((i) => i.kind === 'product');
  t.equal(products.length, 100, 'two variants each');
  t.equal(new Set(products.map((i) => i.externalId)).size, 100);
  const pages = server.requests.filter((r) => r.operation === 'Products');
  t.equal(pages.length, Math.ceil(50 / SHOPIFY_PAGE_SIZE));
  t.ok(pages.every((r) => r.requestedCost! <= 1000 && r.status === 200));
  t.ok(products.every(acceptedByProductSchema));
});

t.test('fetches the variants past the first ten of a product', async (t) => {
  const { server, h } = await setup(t);
  const base = linenShirt();
  const variants = Array.from({ length: 265 }, (_, i) => ({
    ...base.variants[0]!,
    id: 500000 + i,
    title: `Size ${i}`,
    sku: `BIG-${i}`,
    options: [{ name: 'Size', value: String(i) }],
  }));
  server.catalogue.put({ ...base, id: 5000, variants });
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 265);
  t.equal(server.requests.filter((r) => r.operation === 'MoreVariants').length, 2);
});

t.test('paces by throttleStatus: waits at restoreRate instead of being throttled', async (t) => {
  const { server, h } = await setup(t, { products: 80, maximumAvailable: 1000, restoreRate: 10 });
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 160);
  t.ok(h.sleeps.length > 0, 'the source waited');
  t.equal(server.requests.filter((r) => r.throttled).length, 0, 'never throttled');
  // Each wait is what the bucket lacked for the next page, at 10 points a second.
  for (const ms of h.sleeps) t.ok(ms > 0 && ms <= 100_000);
});

t.test('recovers from THROTTLED (HTTP 200) by waiting for the bucket', async (t) => {
  const { server, h } = await setup(t, { products: 30 });
  const items: SourceItem[] = [];
  for await (const item of shopifySource.items(h.ctx)) {
    items.push(item);
    // Another app drains the bucket after the first page.
    if (items.length === 2) server.bucket.available = 0;
  }
  t.equal(items.filter((i) => i.kind === 'product').length, 60);
  const throttled = server.requests.filter((r) => r.throttled);
  t.equal(throttled.length, 1);
  const cost = throttled[0]!.requestedCost!;
  t.ok(h.sleeps.includes(Math.ceil((cost / 100) * 1000)), 'waited cost / restoreRate seconds');
});

t.test('THROTTLED without the bucket figures: growing waits, then the run goes on', async (t) => {
  const { server, h } = await setup(t, { products: 2 });
  const bare = JSON.stringify({
    errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }],
  });
  server.failNext.push({ status: 200, body: bare }, { status: 200, body: bare });
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 4);
  t.same(h.sleeps, [1000, 2000]);
});

t.test('429 and 5xx are retried; a shop that stays down is unavailable', async (t) => {
  const { server, h } = await setup(t, { products: 3 });
  server.failNext.push({ status: 429 }, { status: 503 });
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 6);
  t.same(h.retryWaits.length, 2);
  t.ok(h.retryWaits[0]! >= 2000, 'Retry-After of the 429 honoured');

  server.failNext.push(...Array.from({ length: 4 }, () => ({ status: 500 })));
  const err = await collect(shopifySource, h.ctx).catch((e: unknown) => e);
  t.ok(err instanceof SourceError && err.kind === 'unavailable', String(err));
});

t.test('401, 402 and 423 stop the run with what the merchant should do', async (t) => {
  const { server, h } = await setup(t, { products: 1 });
  const cases: [number, SourceError['kind'], RegExp][] = [
    [401, 'auth', /access token/],
    [402, 'unavailable', /frozen/],
    [423, 'unavailable', /locked/],
  ];
  for (const [status, kind, message] of cases) {
    server.failNext.push({ status });
    const err = await collect(shopifySource, h.ctx).catch((e: unknown) => e);
    t.ok(err instanceof SourceError, `${status} is a SourceError`);
    t.equal((err as SourceError).kind, kind, `${status} -> ${kind}`);
    t.match((err as SourceError).message, message);
  }
  const wrong = sourceHarness({
    shopDomain: new URL(server.origin).host,
    credentials: { access_token: 'shpat_wrong' },
  });
  const err = await collect(shopifySource, wrong.ctx).catch((e: unknown) => e);
  t.equal((err as SourceError).kind, 'auth');
  const tested = await shopifySource.test(wrong.ctx);
  t.equal(tested.ok, false);
  t.match(tested.message, /401/);
});

t.test('test() reads the shop name and currency', async (t) => {
  const { h } = await setup(t, { shopName: 'Acme Outfitters' });
  t.same(await shopifySource.test(h.ctx), {
    ok: true,
    message: 'connected to the Shopify shop "Acme Outfitters" (currency EUR)',
  });
});

t.test('client credentials: exchanged, kept, reused, refreshed before expiry', async (t) => {
  const clock = clockAt('2026-11-25T12:00:00Z');
  const { server, h } = await setup(
    t,
    { products: 2, clientId: 'client-1', clientSecret: 'secret-1', tokenTtlSeconds: 86399 },
    {
      clock,
      credentials: { client_id: 'client-1', client_secret: 'secret-1', webhook_secret: 'whs' },
    },
  );
  await collect(shopifySource, h.ctx);
  t.equal(server.tokens.size, 1, 'one exchange');
  t.equal(h.savedCredentials.length, 1);
  const saved = h.savedCredentials[0]!;
  t.match(saved.access_token, /^shpat_/);
  t.equal(saved.access_token_expires_at, new Date(clock.ms() + 86399_000).toISOString());
  t.equal(saved.client_secret, 'secret-1', 'the client credentials are kept beside the token');
  t.equal(saved.webhook_secret, 'whs', 'and so is the webhook secret');
  const graphql = server.requests.filter((r) => r.path.includes('graphql'));
  t.ok(graphql.every((r) => r.token === saved.access_token));

  // An hour later: the kept token is used, no exchange.
  clock.advance(3600);
  await collect(shopifySource, h.ctx);
  t.equal(server.tokens.size, 1);

  // Five minutes before it expires: refreshed before the first query.
  clock.set(new Date(Date.parse(saved.access_token_expires_at!) - 5 * 60_000).toISOString());
  await collect(shopifySource, h.ctx);
  t.equal(server.tokens.size, 2);
  t.equal(h.savedCredentials.length, 2);
  const last = server.requests.filter((r) => r.path.includes('graphql')).at(-1)!;
  t.equal(last.token, h.savedCredentials[1]!.access_token);

  // A token revoked early: one refresh, then the run goes on.
  server.tokens.clear();
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 4);
  t.equal(h.savedCredentials.length, 3);

  // Wrong client secret: auth.
  const wrong = sourceHarness({
    shopDomain: new URL(server.origin).host,
    credentials: { client_id: 'client-1', client_secret: 'nope' },
  });
  const err = await collect(shopifySource, wrong.ctx).catch((e: unknown) => e);
  t.equal((err as SourceError).kind, 'auth');
  t.match((err as SourceError).message, /invalid_client/);
});

t.test('a token that runs out during a long, paced run is refreshed before it does', async (t) => {
  const clock = clockAt('2026-11-25T12:00:00Z');
  const { server, h } = await setup(
    t,
    {
      products: 200,
      maximumAvailable: 1000,
      restoreRate: 1,
      clientId: 'client-1',
      clientSecret: 'secret-1',
      tokenTtlSeconds: 15 * 60,
    },
    { clock, credentials: { client_id: 'client-1', client_secret: 'secret-1' } },
  );
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 400);
  const waited = h.sleeps.reduce((a, b) => a + b, 0);
  t.ok(waited > 15 * 60_000, `the run outlived a token (${Math.round(waited / 1000)} s of pacing)`);
  t.ok(server.tokens.size >= 2, 'a new token was fetched during the run');
  t.equal(server.requests.filter((r) => r.status === 401).length, 0, 'never sent an expired one');
});

t.test('large catalogues go through a bulk operation with the same items', async (t) => {
  const { server, h } = await setup(t, { products: 40 });
  server.catalogue.put(linenShirt());
  const paged = await collect(shopifySource, h.ctx);
  t.equal(server.bulkOperations.length, 0);

  const bulk = sourceHarness({
    shopDomain: new URL(server.origin).host,
    credentials: { access_token: 'shpat_local_test_token' },
    settings: { bulk_threshold: 10, bulk_poll_seconds: 3 },
    clock: h.clock,
  });
  const items = await collect(shopifySource, bulk.ctx);
  t.equal(server.bulkOperations.length, 1);
  t.equal(server.bulkOperations[0]!.status, 'COMPLETED');
  t.same(bulk.sleeps, [3000, 3000], 'polled every bulk_poll_seconds until COMPLETED');
  t.same(items, paged, 'bulk and paged runs yield the same items');
  t.equal(
    server.requests.filter((r) => r.operation === 'Products').length,
    Math.ceil(41 / SHOPIFY_PAGE_SIZE),
    'no paging in the bulk run',
  );
  const jsonl = server.requests.find((r) => r.path.startsWith('/bulk/'));
  t.ok(jsonl, 'the JSONL file was read');
  t.equal(jsonl!.token, null, 'the file URL is fetched without the token');
});

t.test(
  'a bulk export left running by a stopped run is waited for, not started again',
  async (t) => {
    const { server, h } = await setup(t, { products: 12 }, { settings: { bulk_threshold: 10 } });
    const stopped = sourceHarness({
      shopDomain: new URL(server.origin).host,
      credentials: { access_token: 'shpat_local_test_token' },
      settings: { bulk_threshold: 10 },
    });
    stopped.ctx.sleep = () => Promise.reject(new Error('aborted'));
    const err = await collect(shopifySource, stopped.ctx).catch((e: unknown) => e);
    t.ok(err instanceof SourceError, 'the first run stopped while polling');
    t.equal(server.bulkOperations.length, 1);
    t.equal(server.bulkOperations[0]!.status, 'CREATED');

    const items = await collect(shopifySource, h.ctx);
    t.equal(server.bulkOperations.length, 1, 'no second export');
    t.equal(items.filter((i) => i.kind === 'product').length, 24);
    t.ok(server.requests.some((r) => r.operation === 'CurrentBulk'));

    // Another app's query running: the run says so.
    server.bulkOperations.push({
      id: 'gid://shopify/BulkOperation/99',
      status: 'RUNNING',
      query: '{ orders { edges { node { id } } } }',
      polls: 0,
      errorCode: null,
    });
    const busy = await collect(shopifySource, h.ctx).catch((e: unknown) => e);
    t.match((busy as Error).message, /already in progress/);
  },
);

t.test('a failed bulk operation fails the run', async (t) => {
  const { server, h } = await setup(t, { products: 5 }, { settings: { bulk_threshold: 1 } });
  server.failNextBulk = 'INTERNAL_SERVER_ERROR';
  const err = await collect(shopifySource, h.ctx).catch((e: unknown) => e);
  t.ok(err instanceof SourceError);
  t.match((err as Error).message, /FAILED \(INTERNAL_SERVER_ERROR\)/);
});

t.test('a bad product fails alone', async (t) => {
  const { server, h } = await setup(t, { products: 3 });
  server.catalogue.update(2, (p) => {
    p.variants[1]!.price = null;
  });
  const items = await collect(shopifySource, h.ctx);
  t.equal(items.filter((i) => i.kind === 'product').length, 5);
  t.same(
    items.filter((i) => i.kind === 'error'),
    [{ kind: 'error', externalId: '202', field: 'price', reason: 'the variant has no price' }],
  );
});

t.test('no credentials: the storefront /products.json, deduplicated', async (t) => {
  const { server, h } = await setup(t, {}, { credentials: null });
  server.catalogue.fill(300, 100);
  server.catalogue.update(107, (p) => {
    p.status = 'DRAFT';
  });
  const items: SourceItem[] = [];
  for await (const item of shopifySource.items(h.ctx)) {
    items.push(item);
    // A product published while we page shifts page 2 by one: product 250 comes again.
    if (items.length === 10) server.catalogue.put({ ...linenShirt(), id: 5 });
  }
  const products = items.filter((i) => i.kind === 'product');
  t.equal(new Set(products.map((i) => i.externalId)).size, products.length, 'no item twice');
  t.equal(products.length, 299 * 2, 'every published product once, the draft not listed');
  const pages = server.requests.filter((r) => r.path.startsWith('/products.json'));
  t.same(
    pages.map((r) => r.path),
    ['/products.json?limit=250&page=1', '/products.json?limit=250&page=2'],
  );
  const first = productsById(items).get('10001')!;
  t.equal(first.currency, 'EUR', 'currency from /meta.json');
  t.equal(first.attributes?.url, `${server.origin}/products/synthetic-product-100?variant=10001`);
  t.equal(first.attributes?.availability, 'out_of_stock');
  t.ok(products.every(acceptedByProductSchema));
  const tested = await shopifySource.test(h.ctx);
  t.equal(tested.ok, true);
});

t.test(
  'webhook(): products/create|update map like the sync, delete removes the group',
  async (t) => {
    const { server, h } = await setup(t, { products: 4 });
    server.catalogue.put(linenShirt());
    const synced = productsById(await collect(shopifySource, h.ctx));
    for (const id of [3, 9001]) {
      const product = server.catalogue.get(id)!;
      const change = await shopifySource.webhook!(
        h.ctx,
        'products/update',
        webhookProduct(product),
      );
      t.same(change.removedGroupIds, []);
      t.equal(change.items.length, product.variants.length);
      for (const item of change.items) {
        t.equal(item.kind, 'product');
        if (item.kind === 'product')
          t.same(item.product, synced.get(item.externalId), `variant ${item.externalId} as synced`);
      }
    }
    const created = await shopifySource.webhook!(
      h.ctx,
      'products/create',
      webhookProduct(linenShirt()),
    );
    t.equal(created.items.length, 2);
    t.same(await shopifySource.webhook!(h.ctx, 'products/delete', { id: 9001 }), {
      items: [],
      removedGroupIds: ['9001'],
    });
    t.same(await shopifySource.webhook!(h.ctx, 'orders/create', { id: 1 }), {
      items: [],
      removedGroupIds: [],
    });
  },
);

t.test('credentials are never sent over plain HTTP to a public host', async (t) => {
  for (const options of [
    { shopDomain: 'http://shop.example.com' },
    { shopDomain: 'shop.example.com', settings: { scheme: 'http' } },
  ]) {
    const h = sourceHarness({ ...options, credentials: { access_token: 'shpat_x' } });
    const err = await collect(shopifySource, h.ctx).catch((e: unknown) => e);
    t.ok(err instanceof SourceError && err.kind === 'invalid');
    t.match((err as Error).message, /HTTPS/);
  }
});

t.test('a second run sees a price change, a removed product and an added variant', async (t) => {
  const { server, h } = await setup(t, { products: 5 });
  const before = productsById(await collect(shopifySource, h.ctx));
  server.catalogue.update(2, (p) => {
    p.variants[0]!.price = '99.95';
  });
  server.catalogue.remove(3);
  server.catalogue.update(4, (p) => {
    p.variants.push({
      ...p.variants[0]!,
      id: 499,
      title: 'L',
      sku: 'SYN-4-L',
      options: [{ name: 'Size', value: 'L' }],
    });
  });
  const after = productsById(await collect(shopifySource, h.ctx));
  t.equal(after.get('201')!.price, '99.95');
  t.same(
    { ...after.get('201')!, price: before.get('201')!.price },
    before.get('201'),
    'only the price',
  );
  t.notOk(after.has('301') || after.has('302'), 'the removed product is gone');
  t.equal(after.get('499')!.name, 'Synthetic product 4 - L');
  t.equal(after.get('499')!.attributes?.item_group_id, '4');
  t.equal(after.size, before.size - 2 + 1);
  for (const id of ['101', '102', '501', '502'])
    t.same(after.get(id), before.get(id), `${id} unchanged`);
});

t.test(
  'the local Shopify refuses what Shopify refuses: over 1,000 points, unknown fields',
  async (t) => {
    const { server } = await setup(t, { products: 1 });
    const client = createHttpClient({ allowPrivate: true });
    const ask = async (query: string) => {
      const res = await client.request({
        method: 'POST',
        url: `${server.origin}/admin/api/2026-10/graphql.json`,
        headers: {
          'content-type': 'application/json',
          'x-shopify-access-token': 'shpat_local_test_token',
        },
        body: JSON.stringify({ query }),
      });
      return (await res.json()) as { errors?: { extensions: Record<string, unknown> }[] };
    };
    const tooBig = await ask(
      '{ products(first: 250) { nodes { id variants(first: 10) { nodes { id } } } } }',
    );
    t.same(tooBig.errors?.[0]?.extensions, {
      code: 'MAX_COST_EXCEEDED',
      cost: 2 + 250 * (1 + 2 + 10),
      maxCost: 1000,
    });
    const typo = await ask('{ shop { nmae } }');
    t.equal(typo.errors?.[0]?.extensions.code, 'undefinedField');
    t.ok(SHOPIFY_PAGE_SIZE < 250, `so the sync pages ${SHOPIFY_PAGE_SIZE} products at a time`);
  },
);
