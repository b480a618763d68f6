import t from 'tap';
import { productBody, startTestServer } from '../support/server.js';

t.test('a product is created, read, listed, updated and deleted', async (t) => {
  const s = await startTestServer(t);
  const created = await s.request('POST', '/v1/products', {
    body: productBody({ description: 'Grippy' }),
  });
  t.equal(created.status, 201);
  t.match(created.body.id, /^prod_[A-Za-z0-9]{16}$/);
  t.equal(created.headers.get('location'), `/v1/products/${created.body.id}`);
  t.match(created.body, {
    name: 'Trail Shoe',
    description: 'Grippy',
    price: 79.99,
    currency: 'USD',
    status: 'active',
    category: 'Apparel > Shoes',
    images: ['https://img.example.com/a.jpg'],
    attributes: { brand: 'Northwind', features: ['Light'] },
  });
  t.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const got = await s.request('GET', `/v1/products/${created.body.id}`);
  t.equal(got.status, 200);
  t.same(got.body, created.body);

  const updated = await s.request('PUT', `/v1/products/${created.body.id}`, {
    body: { price: 89.5, status: 'draft' },
  });
  t.equal(updated.status, 200);
  t.equal(updated.body.price, 89.5);
  t.equal(updated.body.status, 'draft');
  t.equal(updated.body.name, 'Trail Shoe', 'fields not sent are kept');
  t.same(updated.body.attributes, created.body.attributes);

  const list = await s.request('GET', '/v1/products');
  t.equal(list.body.products.length, 1);
  t.same(list.body.pagination, { limit: 50, offset: 0, total: 1, has_more: false });

  const deleted = await s.request('DELETE', `/v1/products/${created.body.id}`);
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  t.equal((await s.request('GET', `/v1/products/${created.body.id}`)).status, 404);
  t.equal((await s.request('DELETE', `/v1/products/${created.body.id}`)).status, 404);
});

t.test(
  'each change records its event with the product as the API returns it, in one transaction',
  async (t) => {
    const s = await startTestServer(t);
    const created = await s.request('POST', '/v1/products', { body: productBody({ id: 'SKU-1' }) });
    const updated = await s.request('PUT', '/v1/products/SKU-1', { body: { name: 'Renamed' } });
    await s.request('PUT', '/v1/products/SKU-1', { body: { name: 'Renamed' } });
    await s.request('DELETE', '/v1/products/SKU-1');
    // A failed create leaves no event and no row.
    await s.request('POST', '/v1/products', { body: productBody({ id: 'SKU-1', price: 1.001 }) });
    const events = await s.server.store.db
      .selectFrom('events')
      .selectAll()
      .orderBy('seq')
      .execute();
    t.same(
      events.map((e) => e.type),
      ['product.created', 'product.updated', 'product.deleted'],
      'an update that changes nothing records nothing',
    );
    t.same(JSON.parse(events[0]!.data), created.body);
    t.same(JSON.parse(events[1]!.data), updated.body);
    t.same(JSON.parse(events[2]!.data), updated.body, 'deleted carries the last state');
    t.match(events[0]!.id, /^evt_/);
    t.equal((await s.request('GET', '/v1/products/SKU-1')).status, 404);
  },
);

t.test('a client-supplied id is kept, and a taken id is 409 already_exists', async (t) => {
  const s = await startTestServer(t);
  t.equal(
    (await s.request('POST', '/v1/products', { body: productBody({ id: 'sku_A-1.b' }) })).status,
    201,
  );
  const again = await s.request('POST', '/v1/products', { body: productBody({ id: 'sku_A-1.b' }) });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'already_exists');
  for (const bad of ['', 'has space', 'slash/id', 'x'.repeat(101), 'é']) {
    const res = await s.request('POST', '/v1/products', { body: productBody({ id: bad }) });
    t.equal(res.status, 422, `id ${JSON.stringify(bad)} is refused`);
    t.equal(res.body.error.details.split(':')[0], 'id');
  }
  t.equal(
    (await s.request('POST', '/v1/products', { body: productBody({ id: 'x'.repeat(100) }) }))
      .status,
    201,
  );
});

t.test(
  'field limits: at the limit is accepted, one over is FIELD_TOO_LONG naming the field',
  async (t) => {
    const s = await startTestServer(t);
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['name', { name: 'n'.repeat(150) }, { name: 'n'.repeat(151) }],
      ['description', { description: 'd'.repeat(5000) }, { description: 'd'.repeat(5001) }],
      ['category', { category: 'c'.repeat(750) }, { category: 'c'.repeat(751) }],
      [
        'attributes.brand',
        { attributes: { brand: 'b'.repeat(70) } },
        { attributes: { brand: 'b'.repeat(71) } },
      ],
      [
        'attributes.features[0]',
        { attributes: { features: ['f'.repeat(500)] } },
        { attributes: { features: ['f'.repeat(501)] } },
      ],
      ['name (emoji count as one)', { name: '😀'.repeat(150) }, { name: '😀'.repeat(151) }],
    ];
    for (const [field, ok, over] of cases) {
      const accepted = await s.request('POST', '/v1/products', { body: productBody(ok) });
      t.equal(accepted.status, 201, `${field} at the limit`);
      const refused = await s.request('POST', '/v1/products', {
        body: productBody(over),
        headers: { prefer: 'envelope' },
      });
      t.equal(refused.status, 422, `${field} over the limit`);
      t.equal(refused.body.error.code, 'FIELD_TOO_LONG', field);
      t.equal(refused.body.error.details.field, field.split(' ')[0]);
    }
    const url = `https://img.example.com/${'a'.repeat(2048 - 'https://img.example.com/'.length)}`;
    t.equal(
      (await s.request('POST', '/v1/products', { body: productBody({ images: [url] }) })).status,
      201,
      'a 2048-character URL',
    );
    const long = await s.request('POST', '/v1/products', {
      body: productBody({ images: [`${url}a`] }),
    });
    t.equal(long.status, 422);
    t.equal(long.body.error.details, 'images[0]: must be at most 2048 characters');
    const images = Array.from({ length: 20 }, (_, i) => `https://img.example.com/${i}.jpg`);
    t.equal(
      (await s.request('POST', '/v1/products', { body: productBody({ images }) })).status,
      201,
      '20 images',
    );
    const many = await s.request('POST', '/v1/products', {
      body: productBody({ images: [...images, 'https://x.example/21.jpg'] }),
    });
    t.equal(many.status, 422);
    t.equal(many.body.error.details, 'images: must have at most 20 items');
    const features = Array.from({ length: 50 }, (_, i) => `f${i}`);
    t.equal(
      (await s.request('POST', '/v1/products', { body: productBody({ attributes: { features } }) }))
        .status,
      201,
    );
    const tooMany = await s.request('POST', '/v1/products', {
      body: productBody({ attributes: { features: [...features, 'x'] } }),
    });
    t.equal(tooMany.body.error.details, 'attributes.features: must have at most 50 items');
  },
);

t.test(
  'malformed input is refused with the field and the problem, and writes nothing',
  async (t) => {
    const s = await startTestServer(t);
    const cases: [string, Record<string, unknown>, number, string, string][] = [
      ['missing name', { name: undefined }, 422, 'missing_parameter', 'name: is required'],
      ['missing price', { price: undefined }, 422, 'missing_parameter', 'price: is required'],
      ['empty name', { name: '' }, 422, 'invalid_parameter', 'name: must not be empty'],
      ['blank name', { name: '   ' }, 422, 'invalid_parameter', 'name: must not be empty'],
      ['name as number', { name: 42 }, 422, 'invalid_parameter', 'name: must be a string'],
      ['name as array', { name: ['x'] }, 422, 'invalid_parameter', 'name: must be a string'],
      [
        'price as object',
        { price: { amount: 1 } },
        422,
        'invalid_parameter',
        'price: must be a decimal number',
      ],
      ['negative price', { price: -1 }, 422, 'invalid_parameter', 'price: must not be negative'],
      [
        'huge price',
        { price: 1e300 },
        422,
        'invalid_parameter',
        'price: must be at most 1000000000000',
      ],
      [
        'price as words',
        { price: 'ten' },
        422,
        'invalid_parameter',
        'price: must be a decimal number such as 19.99',
      ],
      [
        'too many decimals',
        { price: 10.999 },
        422,
        'invalid_parameter',
        'price: must have at most 2 decimal places for USD',
      ],
      [
        'decimals on JPY',
        { price: 5.5, currency: 'JPY' },
        422,
        'invalid_parameter',
        'price: must be a whole number for JPY',
      ],
      [
        'lower-case currency',
        { currency: 'usd' },
        422,
        'invalid_parameter',
        'currency: must be a three-letter upper-case ISO 4217 code',
      ],
      [
        'unknown currency',
        { currency: 'ABC' },
        422,
        'invalid_parameter',
        'currency: must be an ISO 4217 currency code',
      ],
      [
        'bad status',
        { status: 'archived' },
        422,
        'invalid_parameter',
        'status: must be one of active, inactive, draft',
      ],
      [
        'attributes as array',
        { attributes: ['brand'] },
        422,
        'invalid_parameter',
        'attributes: must be an object',
      ],
      [
        'images as string',
        { images: 'https://x.example/a.jpg' },
        422,
        'invalid_parameter',
        'images: must be an array',
      ],
      [
        'ftp image',
        { images: ['ftp://x.example/a.jpg'] },
        422,
        'invalid_parameter',
        'images[0]: must be an absolute http or https URL',
      ],
      [
        'relative image',
        { images: ['/a.jpg'] },
        422,
        'invalid_parameter',
        'images[0]: must be an absolute http or https URL',
      ],
      [
        'bad gtin',
        { attributes: { gtin: '4006381333932' } },
        422,
        'invalid_parameter',
        'attributes.gtin: must be a GTIN-8, -12, -13 or -14 with a valid check digit',
      ],
      [
        'negative inventory',
        { attributes: { inventory_quantity: -1 } },
        422,
        'invalid_parameter',
        'attributes.inventory_quantity: must be at least 0',
      ],
      [
        'fractional inventory',
        { attributes: { inventory_quantity: 1.5 } },
        422,
        'invalid_parameter',
        'attributes.inventory_quantity: must be an integer',
      ],
      [
        'bad condition',
        { attributes: { condition: 'mint' } },
        422,
        'invalid_parameter',
        'attributes.condition: must be one of new, refurbished, used',
      ],
      [
        'empty category level',
        { category: 'Apparel >  > Shoes' },
        422,
        'invalid_parameter',
        'category: must not have an empty level',
      ],
      [
        'unknown field',
        { colour: 'red' },
        422,
        'invalid_parameter',
        'colour: is not a known field',
      ],
      [
        'lone surrogate',
        { name: 'bad \ud800 text' },
        422,
        'invalid_parameter',
        'name: must be valid Unicode (it has a lone surrogate)',
      ],
      [
        'NUL',
        { name: 'a\u0000b' },
        422,
        'invalid_parameter',
        'name: must not contain NUL characters',
      ],
    ];
    for (const [label, override, status, code, details] of cases) {
      const res = await s.request('POST', '/v1/products', { body: productBody(override) });
      t.equal(res.status, status, label);
      t.equal(res.body?.error?.code, code, label);
      t.equal(res.body?.error?.details, details, label);
    }
    const list = await s.request('GET', '/v1/products');
    t.equal(list.body.pagination.total, 0, 'nothing was written');
    const events = await s.server.store.db.selectFrom('events').selectAll().execute();
    t.equal(events.length, 0, 'no event was recorded');
  },
);

t.test('unicode text round-trips unchanged', async (t) => {
  const s = await startTestServer(t);
  const name = 'Café ☕ 東京 — “quotes” <b>&amp;</b> 🧗‍♀️';
  const res = await s.request('POST', '/v1/products', {
    body: productBody({ name, description: 'line\nbreak\ttab', attributes: { brand: 'Zoë & Co' } }),
  });
  t.equal(res.status, 201);
  const got = await s.request('GET', `/v1/products/${res.body.id}`);
  t.equal(got.body.name, name);
  t.equal(got.body.description, 'line\nbreak\ttab');
  t.equal(got.body.attributes.brand, 'Zoë & Co');
});

t.test(
  'money: currencies with 0, 2 and 3 decimals, decimal strings, and exact round trips',
  async (t) => {
    const s = await startTestServer(t);
    const cases: [unknown, string, number][] = [
      [1999, 'JPY', 1999],
      [0.1, 'USD', 0.1],
      ['0.30', 'USD', 0.3],
      [1.005, 'USD', 1.005],
      [12.345, 'KWD', 12.345],
      [0, 'EUR', 0],
      [999999999999.99, 'USD', 999999999999.99],
    ];
    for (const [price, currency, expected] of cases) {
      const res = await s.request('POST', '/v1/products', {
        body: productBody({ price, currency }),
      });
      if (currency === 'USD' && price === 1.005) {
        t.equal(res.status, 422, '1.005 USD has three decimals');
        continue;
      }
      t.equal(res.status, 201, `${String(price)} ${currency}`);
      t.equal(res.body.price, expected);
    }
    const row = await s.server.store.db
      .selectFrom('products')
      .select(['price_minor', 'currency'])
      .where('currency', '=', 'KWD')
      .executeTakeFirstOrThrow();
    t.equal(row.price_minor, 12345, 'stored as integer minor units');
  },
);

t.test(
  'PUT replaces attributes whole, re-prices on a currency change, and refuses what would lose money',
  async (t) => {
    const s = await startTestServer(t);
    await s.request('POST', '/v1/products', {
      body: productBody({ id: 'P1', price: 10, attributes: { brand: 'A', color: 'red' } }),
    });
    const res = await s.request('PUT', '/v1/products/P1', { body: { attributes: { brand: 'B' } } });
    t.same(res.body.attributes, { brand: 'B' });
    const yen = await s.request('PUT', '/v1/products/P1', { body: { currency: 'JPY' } });
    t.equal(yen.status, 200);
    t.equal(yen.body.price, 10);
    t.equal(yen.body.currency, 'JPY');
    await s.request('PUT', '/v1/products/P1', { body: { currency: 'USD', price: 10.5 } });
    const lossy = await s.request('PUT', '/v1/products/P1', { body: { currency: 'JPY' } });
    t.equal(lossy.status, 422);
    t.match(lossy.body.error.details, /^currency: cannot change to JPY/);
    t.equal(
      (await s.request('PUT', '/v1/products/P1', { body: { id: 'P2' } })).body.error.details,
      'id: is not a known field',
    );
    t.equal((await s.request('PUT', '/v1/products/nope', { body: { name: 'x' } })).status, 404);
    const cleared = await s.request('PUT', '/v1/products/P1', {
      body: { description: null, category: null },
    });
    t.equal(cleared.body.description, null);
    t.equal(cleared.body.category, null);
  },
);

t.test('pagination edges: limit 0, 1, 250, 251, offsets beyond the end, has_more', async (t) => {
  const s = await startTestServer(t);
  // 260 products, created in one transaction-free burst through the API would be slow; use the domain.
  const { createProduct } = await import('../../src/domain/products/products.js');
  for (let i = 0; i < 260; i++) {
    await createProduct(
      s.server.store.db,
      { id: `P${String(i).padStart(3, '0')}`, name: `P${i}`, price: 1 },
      { currency: 'USD' },
      new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    );
  }
  const zero = await s.request('GET', '/v1/products?limit=0');
  t.equal(zero.status, 400);
  t.equal(zero.body.error.code, 'invalid_parameter');
  t.equal(zero.body.error.details, 'limit: must be at least 1');
  const over = await s.request('GET', '/v1/products?limit=251', {
    headers: { prefer: 'envelope' },
  });
  t.equal(over.status, 400);
  t.equal(over.body.error.code, 'INVALID_FIELD_VALUE');
  t.same(over.body.error.details, { field: 'limit', reason: 'must be at most 250' });
  for (const bad of ['abc', '1.5', '-1', '']) {
    t.equal((await s.request('GET', `/v1/products?limit=${bad}`)).status, 400, `limit=${bad}`);
  }
  t.equal((await s.request('GET', '/v1/products?offset=-1')).status, 400);
  const one = await s.request('GET', '/v1/products?limit=1');
  t.equal(one.body.products.length, 1);
  t.equal(one.body.products[0].id, 'P000', 'oldest first');
  t.same(one.body.pagination, { limit: 1, offset: 0, total: 260, has_more: true });
  const max = await s.request('GET', '/v1/products?limit=250');
  t.equal(max.body.products.length, 250);
  t.equal(max.body.pagination.has_more, true);
  const rest = await s.request('GET', '/v1/products?limit=250&offset=250');
  t.equal(rest.body.products.length, 10);
  t.equal(rest.body.products[9].id, 'P259');
  t.equal(rest.body.pagination.has_more, false);
  const beyond = await s.request('GET', '/v1/products?offset=1000');
  t.same(beyond.body.products, []);
  t.same(beyond.body.pagination, { limit: 50, offset: 1000, total: 260, has_more: false });
  const exact = await s.request('GET', '/v1/products?limit=10&offset=250');
  t.equal(exact.body.pagination.has_more, false, 'the last page exactly');
  const repeated = await s.request('GET', '/v1/products?limit=1&limit=2');
  t.equal(repeated.status, 400, 'a repeated parameter is refused');
});

t.test(
  'category filter matches the category and everything below it, not siblings that share a prefix',
  async (t) => {
    const s = await startTestServer(t);
    const categories = [
      'Apparel',
      'Apparel > Shoes',
      'Apparel > Shoes > Running',
      'Apparelx',
      'Apparel Extra',
      'Home > Apparel',
      'Apparel >Shoes2',
    ];
    for (const [i, category] of categories.entries()) {
      await s.request('POST', '/v1/products', {
        body: productBody({ id: `C${i}`, category, status: i === 2 ? 'draft' : 'active' }),
      });
    }
    const ids = async (query: string) =>
      (await s.request('GET', `/v1/products?${query}`)).body.products
        .map((p: { id: string }) => p.id)
        .sort();
    t.same(await ids('category=Apparel'), ['C0', 'C1', 'C2', 'C6']);
    t.same(await ids(`category=${encodeURIComponent('Apparel > Shoes')}`), ['C1', 'C2']);
    t.same(
      await ids(`category=${encodeURIComponent('Apparel>Shoes')}`),
      ['C1', 'C2'],
      'spacing is normalised',
    );
    t.same(await ids('category=Apparelx'), ['C3']);
    t.same(await ids('category=Appar'), []);
    t.same(await ids('category=Apparel&status=active'), ['C0', 'C1', 'C6']);
    t.same(await ids('status=draft'), ['C2']);
    const counted = await s.request('GET', '/v1/products?category=Apparel&limit=1');
    t.same(counted.body.pagination, { limit: 1, offset: 0, total: 4, has_more: true });
    const status = await s.request('GET', '/v1/products?status=archived');
    t.equal(status.status, 400);
    t.equal(status.body.error.details, 'status: must be one of active, inactive, draft');
    t.equal((await s.request('GET', `/v1/products?category=${'x'.repeat(751)}`)).status, 400);
  },
);

t.test('brand filter: attributes.brand exactly, with status and category, paged', async (t) => {
  const s = await startTestServer(t);
  // Eight of ten under one brand: a page of one walks creation order, a page of 50 reads the
  // brand index (queries/products.ts, pageInCreationOrder); both give the same rows.
  const brands = ['Northwind', 'Northwind', 'Café Ünï', 'Northwind', null, 'Northwind'];
  for (let i = 0; i < 10; i++) {
    const brand = i < brands.length ? brands[i] : 'Northwind';
    const res = await s.request('POST', '/v1/products', {
      body: productBody({
        id: `B${i}`,
        status: i === 3 ? 'draft' : 'active',
        category: i % 2 ? 'Home' : 'Apparel',
        attributes: brand === null ? {} : { brand },
      }),
    });
    t.equal(res.status, 201, res.text);
  }
  const ids = async (query: string) =>
    (await s.request('GET', `/v1/products?${query}`)).body.products.map(
      (p: { id: string }) => p.id,
    );
  const northwind = ['B0', 'B1', 'B3', 'B5', 'B6', 'B7', 'B8', 'B9'];
  t.same(await ids('brand=Northwind'), northwind, 'in creation order');
  const oneByOne: string[] = [];
  for (let offset = 0; offset < 8; offset++) {
    oneByOne.push(...(await ids(`brand=Northwind&limit=1&offset=${offset}`)));
  }
  t.same(oneByOne, northwind, 'page by page, the same rows in the same order');
  t.same(await ids(`brand=${encodeURIComponent('Café Ünï')}`), ['B2']);
  t.same(await ids('brand=northwind'), [], 'exactly: case counts');
  t.same(await ids('brand=Northwind&status=draft'), ['B3']);
  t.same(await ids('brand=Northwind&category=Home&status=active'), ['B1', 'B5', 'B7', 'B9']);
  const counted = await s.request('GET', '/v1/products?brand=Northwind&status=active&limit=2');
  t.same(counted.body.pagination, { limit: 2, offset: 0, total: 7, has_more: true });
  const tooLong = await s.request('GET', `/v1/products?brand=${'x'.repeat(71)}`);
  t.equal(tooLong.status, 400);
  t.match(tooLong.body.error.details, /^brand: /);
  t.equal((await s.request('GET', '/v1/products?brand=')).status, 400, 'an empty brand is refused');
});

t.test('status totals stay right across creates, status changes and deletes', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  await s.request('POST', '/v1/products', { body: productBody({ id: 'B', status: 'draft' }) });
  await s.request('POST', '/v1/products', { body: productBody({ id: 'C' }) });
  await s.request('PUT', '/v1/products/C', { body: { status: 'inactive' } });
  await s.request('DELETE', '/v1/products/A');
  const total = async (q: string) =>
    (await s.request('GET', `/v1/products${q}`)).body.pagination.total;
  t.equal(await total(''), 2);
  t.equal(await total('?status=active'), 0);
  t.equal(await total('?status=draft'), 1);
  t.equal(await total('?status=inactive'), 1);
});
