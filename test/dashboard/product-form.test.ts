import t from 'tap';
import { signInDashboard } from '../support/dashboard.js';
import { formValues, tableRows } from '../support/html.js';
import { productBody, startTestServer } from '../support/server.js';

t.test('attributes are edited as fields, and an unchanged form keeps every one', async (t) => {
  const s = await startTestServer(t);
  const attributes = {
    brand: 'Northwind & Co',
    gtin: '4006381333931',
    condition: 'new',
    inventory_quantity: 5,
    features: ['Light', 'Waterproof <3'],
    native_commerce: true,
    custom_note: '123',
    consumer_notice: { type: 'safety_warning', message: 'Keep dry.' },
    tags: ['a', 'b'],
  };
  const created = await s.request('POST', '/v1/products', {
    body: productBody({ id: 'shoe', attributes }),
  });
  t.equal(created.status, 201, created.text);
  const stored = (await s.request('GET', '/v1/products/shoe')).body.attributes;

  const dash = await signInDashboard(s, s.keys.read_write);
  const page = (await dash.get('/dashboard/products/shoe')).text;
  t.notMatch(page, /<code>\{&quot;brand/, 'no raw JSON blob');
  t.match(page, /<dt>brand<\/dt>\s*<dd>Northwind &amp; Co<\/dd>/);
  const values = formValues(page, '/dashboard/products/shoe');
  t.match(values, {
    attr_brand: 'Northwind & Co',
    attr_gtin: '4006381333931',
    attr_condition: 'new',
    attr_inventory_quantity: '5',
    attr_features: 'Light\nWaterproof <3',
  });
  t.same(values.attr_other!.split('\n').sort(), [
    'consumer_notice = {"type":"safety_warning","message":"Keep dry."}',
    'custom_note = "123"',
    'native_commerce = true',
    'tags = ["a","b"]',
  ]);

  // Sent back unchanged: every attribute kept as it was, types and all.
  const same = await dash.post('/dashboard/products/shoe', values);
  t.equal(same.status, 303, same.text);
  t.same((await s.request('GET', '/v1/products/shoe')).body.attributes, stored);

  // A field changed, one emptied, one custom line added.
  const edited = await dash.post('/dashboard/products/shoe', {
    ...values,
    attr_color: 'Blue',
    attr_gtin: '',
    attr_other: `${values.attr_other}\nlining = wool`,
  });
  t.equal(edited.status, 303, edited.text);
  const after = (await s.request('GET', '/v1/products/shoe')).body.attributes;
  t.equal(after.color, 'Blue');
  t.notOk('gtin' in after, 'an emptied field removes its attribute');
  t.equal(after.lining, 'wool');
  t.equal(after.inventory_quantity, 5);

  // The API's message beside the field it names; what was typed stays.
  const badGtin = await dash.post('/dashboard/products/shoe', { ...values, attr_gtin: '123' });
  t.equal(badGtin.status, 422);
  t.match(badGtin.text, /id="f-attr_gtin-error">[^<]*GTIN-8, -12, -13 or -14/);
  t.match(badGtin.text, /name="attr_gtin"\s+type="text"\s+value="123"/);
  const badQuantity = await dash.post('/dashboard/products/shoe', {
    ...values,
    attr_inventory_quantity: '-2',
  });
  t.equal(badQuantity.status, 422);
  t.match(badQuantity.text, /id="f-attr_inventory_quantity-error"/);
  const badLine = await dash.post('/dashboard/products/shoe', {
    ...values,
    attr_other: 'no equals sign here',
  });
  t.equal(badLine.status, 422);
  t.match(badLine.text, /id="f-attr_other-error">Other attributes, line 1: must be key = value/);
  const twice = await dash.post('/dashboard/products/shoe', {
    ...values,
    attr_other: 'brand = Other',
  });
  t.equal(twice.status, 422);
  t.match(twice.text, /line 1: brand is given twice/);
  t.same(
    (await s.request('GET', '/v1/products/shoe')).body.attributes,
    after,
    'a refused form changed nothing',
  );

  // Creating with attribute fields.
  const made = await dash.post('/dashboard/products', {
    id: 'boot',
    name: 'Boot',
    price: '99.50',
    attr_brand: 'Southwind',
    attr_features: 'Warm\n\nTall',
    attr_condition: 'used',
    attr_other: '',
  });
  t.equal(made.status, 303, made.text);
  t.same((await s.request('GET', '/v1/products/boot')).body.attributes, {
    brand: 'Southwind',
    condition: 'used',
    features: ['Warm', 'Tall'],
  });
});

t.test('the products list filters by brand and shows each product’s brand', async (t) => {
  const s = await startTestServer(t);
  for (const [id, brand] of [
    ['N1', 'Northwind'],
    ['C1', 'Campfire & <Co>'],
    ['N2', 'Northwind'],
  ] as const) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id, attributes: { brand } }),
    });
    t.equal(res.status, 201, res.text);
  }
  const dash = await signInDashboard(s, s.keys.read_only);
  const all = await dash.get('/dashboard/products');
  t.same(
    tableRows(all.text).map((r) => r[2]),
    ['Northwind', 'Campfire &amp; &lt;Co&gt;', 'Northwind'],
    'a brand column, escaped',
  );
  const one = await dash.get(`/dashboard/products?brand=${encodeURIComponent('Campfire & <Co>')}`);
  t.same(
    tableRows(one.text).map((r) => r[0]),
    ['Trail Shoe C1'],
  );
  t.match(one.text, 'value="Campfire &amp; &lt;Co&gt;"', 'the filter keeps what was asked');
  const none = await dash.get('/dashboard/products?brand=Nobody');
  t.match(none.text, 'No products match these filters.');
});

t.test(
  'a product’s https images are previewed, without a referrer; others only linked',
  async (t) => {
    const s = await startTestServer(t);
    const res = await s.request('POST', '/v1/products', {
      body: productBody({
        id: 'PIC-1',
        name: 'Boot "Alpine" <b>',
        images: ['https://img.example.com/front.jpg', 'http://old.example.com/side.jpg'],
      }),
    });
    t.equal(res.status, 201, res.text);
    const dash = await signInDashboard(s, s.keys.read_only);
    const page = await dash.get('/dashboard/products/PIC-1');
    const images = [...page.text.matchAll(/<img\b[^>]*>/g)].map((m) => m[0]);
    t.equal(images.length, 1, 'only the https image is loaded');
    t.match(images[0], 'src="https://img.example.com/front.jpg"');
    t.match(images[0], 'alt="Boot &quot;Alpine&quot; &lt;b&gt;, image 1"', 'an escaped alt text');
    t.match(images[0], 'referrerpolicy="no-referrer"');
    t.match(page.text, 'href="http://old.example.com/side.jpg"', 'the other one linked');
    t.match(page.headers.get('content-security-policy'), /img-src 'self' data: https:;/);
  },
);
