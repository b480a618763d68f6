import t, { type Test } from 'tap';
import { createHttpClient } from '../../src/net/http-client.js';
import { SourceError } from '../../src/domain/integrations/source.js';
import { WOO_PER_PAGE, woocommerceSource } from '../../src/platforms/woocommerce.js';
import { gtin13 } from '../support/platform-catalogue.js';
import {
  startWooServer,
  syntheticWooProduct,
  wooProductJson,
  type WooProduct,
  type WooServerOptions,
} from '../support/woocommerce-server.js';
import {
  acceptedByProductSchema,
  collect,
  productsById,
  sourceHarness,
  type HarnessOptions,
} from '../support/source-context.js';

const EAN = gtin13(871234567890);
const KEYS = { consumer_key: 'ck_local_test_key', consumer_secret: 'cs_local_test_secret' };

function linenShirt(): WooProduct {
  return {
    ...syntheticWooProduct(1),
    id: 501,
    name: 'Linen &amp; Shirt',
    slug: 'linen-shirt',
    permalink: 'https://woo.example/product/linen-shirt/',
    description: '<p>Breezy <em>linen</em>.</p>',
    short_description: '<p>Short.</p>',
    sku: 'LIN-1',
    price: '19.99',
    regular_price: '24.99',
    sale_price: '19.99',
    on_sale: true,
    manage_stock: true,
    stock_quantity: 3,
    stock_status: 'instock',
    categories: [
      { id: 15, name: 'Uncategorized', slug: 'uncategorized' },
      { id: 12, name: 'Linen &amp; Cotton', slug: 'linen-cotton' },
    ],
    tags: [{ id: 4, name: 'summer', slug: 'summer' }],
    brands: [{ id: 9, name: 'Acme', slug: 'acme' }],
    images: [
      { id: 1, src: 'https://woo.example/wp-content/uploads/linen-1.jpg', name: '', alt: '' },
      { id: 2, src: 'https://woo.example/wp-content/uploads/linen-2.jpg', name: '', alt: '' },
    ],
    attributes: [
      { id: 0, name: 'Color', position: 0, visible: true, variation: false, options: ['Natural'] },
    ],
    global_unique_id: EAN,
  };
}

function hoodie(): WooProduct {
  const base = syntheticWooProduct(3);
  return {
    ...base,
    id: 502,
    name: 'Hoodie',
    slug: 'hoodie',
    permalink: 'https://woo.example/product/hoodie/',
    categories: [{ id: 11, name: 'Shirts', slug: 'shirts' }],
    brands: [],
    attributes: [
      { id: 0, name: 'Brand', position: 0, visible: true, variation: false, options: ['Hoodco'] },
      { id: 1, name: 'Size', position: 1, visible: true, variation: true, options: ['S', 'M'] },
    ],
    variationList: [
      {
        ...base.variationList[0]!,
        id: 7001,
        sku: 'HOOD-S',
        price: '45.00',
        regular_price: '45.00',
        stock_status: 'onbackorder',
        manage_stock: false,
        stock_quantity: null,
        image: { id: 77, src: 'https://woo.example/wp-content/uploads/hood-s.jpg' },
        attributes: [{ id: 1, name: 'Size', option: 'S' }],
        global_unique_id: '',
        permalink: 'https://woo.example/product/hoodie/?attribute_size=S',
      },
      {
        ...base.variationList[1]!,
        id: 7002,
        sku: '',
        price: '47.50',
        regular_price: '50.00',
        sale_price: '47.50',
        on_sale: true,
        status: 'private',
        stock_status: 'outofstock',
        attributes: [{ id: 1, name: 'Size', option: 'M' }],
        permalink: 'https://woo.example/product/hoodie/?attribute_size=M',
      },
    ],
  };
}

async function setup(
  t: Test,
  serverOptions: WooServerOptions = {},
  harness: Partial<HarnessOptions> = {},
) {
  const server = await startWooServer({ currency: 'EUR', ...serverOptions });
  t.teardown(() => server.close());
  const h = sourceHarness({
    shopDomain: new URL(server.origin).host,
    credentials: KEYS,
    ...harness,
  });
  return { server, h };
}

t.test('maps a simple product and a variable one with its variations', async (t) => {
  const { server, h } = await setup(t);
  server.catalogue.put(linenShirt());
  server.catalogue.put(hoodie());
  const items = await collect(woocommerceSource, h.ctx);
  const byId = productsById(items);
  t.same(byId.get('501'), {
    name: 'Linen & Shirt',
    description: 'Breezy linen.',
    price: '19.99',
    currency: 'EUR',
    status: 'active',
    category: 'Clothing > Shirts > Linen & Cotton',
    images: [
      'https://woo.example/wp-content/uploads/linen-1.jpg',
      'https://woo.example/wp-content/uploads/linen-2.jpg',
    ],
    attributes: {
      item_group_id: '501',
      brand: 'Acme',
      sku: 'LIN-1',
      gtin: EAN,
      barcode: EAN,
      handle: 'linen-shirt',
      tags: ['summer'],
      url: 'https://woo.example/product/linen-shirt/',
      availability: 'in_stock',
      inventory_quantity: 3,
      compare_at_price: '24.99',
      product_type: 'simple',
      color: 'Natural',
    },
  });
  t.same(byId.get('7001'), {
    name: 'Hoodie - S',
    description: 'Product 3, described.',
    price: '45.00',
    currency: 'EUR',
    status: 'active',
    category: 'Clothing > Shirts',
    images: [
      'https://woo.example/wp-content/uploads/hood-s.jpg',
      'https://woo.example/wp-content/uploads/p3.jpg',
    ],
    attributes: {
      item_group_id: '502',
      brand: 'Hoodco',
      sku: 'HOOD-S',
      handle: 'hoodie',
      tags: ['synthetic'],
      url: 'https://woo.example/product/hoodie/?attribute_size=S',
      availability: 'backorder',
      product_type: 'variable',
      options: { Size: 'S' },
      size: 'S',
    },
  });
  const m = byId.get('7002')!;
  t.equal(m.status, 'inactive', 'a private variation is inactive');
  t.equal(m.attributes?.availability, 'out_of_stock');
  t.equal(m.attributes?.compare_at_price, '50.00');
  t.equal(m.attributes?.sku, 'WOO-3', "an empty variation SKU falls back to the product's");
  t.equal(byId.size, 3, 'the variable product itself is no item');
  t.ok(items.every(acceptedByProductSchema));
  t.same(h.state.currency, 'EUR');
  t.same(h.state.category_paths, {
    '10': 'Clothing',
    '11': 'Clothing > Shirts',
    '12': 'Clothing > Shirts > Linen & Cotton',
    '15': 'Uncategorized',
  });
  t.ok(
    server.requests.every((r) => r.auth === 'basic'),
    'HTTP Basic with the consumer key',
  );
});

t.test('pages 100 at a time by X-WP-TotalPages, variations of each variable product', async (t) => {
  const { server, h } = await setup(t, { products: 250 });
  const items = await collect(woocommerceSource, h.ctx);
  const products = items.filter((i) => i.kind === 'product');
  const variable = Math.floor(250 / 3);
  t.equal(products.length, 250 - variable + variable * 2);
  t.equal(new Set(products.map((i) => i.externalId)).size, products.length);
  const pages = server.requests.filter((r) => r.path.startsWith('/wp-json/wc/v3/products?'));
  t.same(
    pages.map((r) => new URL(r.path, 'http://x').searchParams.get('page')),
    ['1', '2', '3'],
  );
  t.ok(pages.every((r) => r.path.includes(`per_page=${WOO_PER_PAGE}`)));
  t.equal(server.requests.filter((r) => r.path.includes('/variations')).length, variable);
  t.ok(products.every(acceptedByProductSchema));
  // stock_status to availability, all three kinds
  const availability = new Map<string, number>();
  for (const p of products)
    if (p.kind === 'product') {
      const a = String(p.product.attributes?.availability);
      availability.set(a, (availability.get(a) ?? 0) + 1);
    }
  t.same([...availability.keys()].sort(), ['backorder', 'in_stock', 'out_of_stock']);
});

t.test('WordPress refuses per_page over 100 with rest_invalid_param', async (t) => {
  const { server } = await setup(t);
  const client = createHttpClient({ allowPrivate: true });
  const auth = `Basic ${Buffer.from(`${KEYS.consumer_key}:${KEYS.consumer_secret}`).toString('base64')}`;
  const res = await client.request({
    url: `${server.origin}/wp-json/wc/v3/products?per_page=101`,
    headers: { authorization: auth },
  });
  t.equal(res.status, 400);
  const body = (await res.json()) as { code: string; data: { params: Record<string, string> } };
  t.equal(body.code, 'rest_invalid_param');
  t.match(body.data.params.per_page, /between 1 \(inclusive\) and 100 \(inclusive\)/);
});

t.test(
  'the currency comes from /data/currencies/current; price strings pass to the schema',
  async (t) => {
    const { server, h } = await setup(t, { currency: 'JPY' });
    server.catalogue.put({ ...linenShirt(), price: '1500', regular_price: '1500', on_sale: false });
    const [item] = (await collect(woocommerceSource, h.ctx)).filter((i) => i.kind === 'product');
    t.equal(item?.kind === 'product' && item.product.currency, 'JPY');
    t.equal(item?.kind === 'product' && item.product.price, '1500');
    t.ok(item && acceptedByProductSchema(item));
  },
);

t.test("consumer keys refused: auth errors naming WooCommerce's code", async (t) => {
  const { server } = await setup(t, { products: 2, writeOnlyKey: { key: 'ck_w', secret: 'cs_w' } });
  const cases: [Record<string, string>, RegExp][] = [
    [{ consumer_key: 'ck_nope', consumer_secret: 'x' }, /woocommerce_rest_authentication_error/],
    [{ consumer_key: KEYS.consumer_key, consumer_secret: 'x' }, /Consumer secret is invalid/],
    [{ consumer_key: 'ck_w', consumer_secret: 'cs_w' }, /woocommerce_rest_cannot_view/],
  ];
  for (const [credentials, message] of cases) {
    const h = sourceHarness({ shopDomain: new URL(server.origin).host, credentials });
    const err = await collect(woocommerceSource, h.ctx).catch((e: unknown) => e);
    t.ok(err instanceof SourceError && err.kind === 'auth', String(err));
    t.match((err as Error).message, message);
    const tested = await woocommerceSource.test(h.ctx);
    t.equal(tested.ok, false);
  }
  const none = sourceHarness({ shopDomain: new URL(server.origin).host, credentials: null });
  const err = await collect(woocommerceSource, none.ctx).catch((e: unknown) => e);
  t.ok(err instanceof SourceError && err.kind === 'invalid');
});

t.test('test() says how many products and the currency', async (t) => {
  const { h } = await setup(t, { products: 42 });
  t.same(await woocommerceSource.test(h.ctx), {
    ok: true,
    message: 'connected to WooCommerce: 42 products, currency EUR',
  });
});

t.test('5xx is retried; a store that stays down is unavailable', async (t) => {
  const { server, h } = await setup(t, { products: 3 });
  server.failNext.push({ status: 502 });
  t.equal((await collect(woocommerceSource, h.ctx)).length, 4);
  t.equal(h.retryWaits.length, 1);
  server.failNext.push(...Array.from({ length: 4 }, () => ({ status: 500 })));
  const err = await collect(woocommerceSource, h.ctx).catch((e: unknown) => e);
  t.ok(err instanceof SourceError && err.kind === 'unavailable');
});

t.test('a bad product fails alone; grouped products are skipped', async (t) => {
  const { server, h } = await setup(t, { products: 4 });
  server.catalogue.update(2, (p) => {
    p.price = '';
  });
  server.catalogue.put({ ...syntheticWooProduct(5), type: 'grouped', price: '' });
  const items = await collect(woocommerceSource, h.ctx);
  t.same(
    items.filter((i) => i.kind === 'error'),
    [{ kind: 'error', externalId: '2', field: 'price', reason: 'the product has no price' }],
  );
  t.same(
    items.filter((i) => i.kind === 'product').map((i) => i.kind === 'product' && i.externalId),
    ['1', '10000030', '10000031', '4'],
  );
});

t.test('webhook(): simple products map like the sync; deleted removes the group', async (t) => {
  const { server, h } = await setup(t, { products: 2 });
  server.catalogue.put(linenShirt());
  const synced = productsById(await collect(woocommerceSource, h.ctx));
  const change = await woocommerceSource.webhook!(
    h.ctx,
    'product.updated',
    wooProductJson(linenShirt()),
  );
  t.equal(change.items.length, 1);
  const [item] = change.items;
  t.same(item?.kind === 'product' && item.product, synced.get('501'), 'as synced');
  t.same(await woocommerceSource.webhook!(h.ctx, 'product.deleted', { id: 501 }), {
    items: [],
    removedGroupIds: ['501'],
  });
});

t.test('webhook(): a variable product or a variation reads its variations', async (t) => {
  const { server, h } = await setup(t, { products: 2 });
  server.catalogue.put(hoodie());
  const synced = productsById(await collect(woocommerceSource, h.ctx));
  const expected = [
    { externalId: '7001', product: synced.get('7001') },
    { externalId: '7002', product: synced.get('7002') },
  ];
  const itemsOf = (change: { items: unknown[] }) =>
    change.items.map((i: any) => ({ externalId: i.externalId, product: i.product }));
  const before = server.requests.length;
  const change = await woocommerceSource.webhook!(
    h.ctx,
    'product.updated',
    wooProductJson(hoodie()),
  );
  t.same(itemsOf(change), expected, 'every variation, as the sync maps it');
  t.same(change.removedGroupIds, []);
  t.same(
    server.requests.slice(before).map((r) => r.path.split('?')[0]),
    ['/wp-json/wc/v3/products/502/variations'],
  );
  t.ok(server.requests.slice(before).every((r) => r.auth === 'basic'));

  // A variation's own webhook: its parent and the parent's variations are read.
  const variation = { ...hoodie().variationList[0]!, type: 'variation', parent_id: 502 };
  const viaVariation = await woocommerceSource.webhook!(h.ctx, 'product.updated', variation);
  t.same(itemsOf(viaVariation), expected);

  // The store refuses the keys: nothing changes (the next sync brings the variations).
  server.failNext.push({ status: 401, body: '{"code":"woocommerce_rest_cannot_view"}' });
  t.same(await woocommerceSource.webhook!(h.ctx, 'product.updated', wooProductJson(hoodie())), {
    items: [],
    removedGroupIds: [],
  });
  // A trashed variable product is a removal, read from the payload alone.
  const trashed = { ...wooProductJson(hoodie()), status: 'trash' };
  const n = server.requests.length;
  t.same(await woocommerceSource.webhook!(h.ctx, 'product.updated', trashed), {
    items: [],
    removedGroupIds: ['502'],
  });
  t.equal(server.requests.length, n);
});

t.test('keys are never sent over plain HTTP to a public host', async (t) => {
  const h = sourceHarness({
    shopDomain: 'shop.example.com',
    credentials: KEYS,
    settings: { scheme: 'http' },
  });
  const err = await collect(woocommerceSource, h.ctx).catch((e: unknown) => e);
  t.ok(err instanceof SourceError && err.kind === 'invalid');
  t.match((err as Error).message, /HTTPS/);
});

t.test('a second run sees a price change, a removed product and an added variation', async (t) => {
  const { server, h } = await setup(t, { products: 6 });
  const before = productsById(await collect(woocommerceSource, h.ctx));
  server.catalogue.update(2, (p) => {
    p.price = '5.25';
  });
  server.catalogue.remove(4);
  server.catalogue.update(6, (p) => {
    p.variationList.push({
      ...p.variationList[0]!,
      id: 9999,
      sku: 'WOO-6-GREEN',
      attributes: [{ id: 1, name: 'Color', option: 'Green' }],
    });
  });
  const after = productsById(await collect(woocommerceSource, h.ctx));
  t.equal(after.get('2')!.price, '5.25');
  t.notOk(after.has('4'));
  t.equal(after.get('9999')!.name, 'Synthetic & product 6 - Green');
  t.equal(after.get('9999')!.attributes?.item_group_id, '6');
  t.equal(after.size, before.size - 1 + 1);
  t.same(after.get('1'), before.get('1'));
});
