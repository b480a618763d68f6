import t from 'tap';
import {
  AVAILABILITIES,
  brandOrStore,
  readCatalogueProduct,
} from '../../../src/domain/catalogue/product.js';
import { isHttpUrl, isLinkAsGiven, normaliseHttpUrl } from '../../../src/domain/catalogue/url.js';
import { catalogueRow } from '../../support/catalogue.js';

const STORE = { storeName: 'Acme Store' };
const read = (fields: Parameters<typeof catalogueRow>[0]) =>
  readCatalogueProduct(catalogueRow(fields), STORE);

t.test('the brand is the one the product names, else the store name', async (t) => {
  t.equal(read({ attributes: { brand: 'Northwind' } }).brand, 'Northwind');
  t.equal(read({ attributes: { brand: 'Northwind' } }).givenBrand, 'Northwind');
  const unbranded = read({ attributes: {} });
  t.equal(unbranded.brand, 'Acme Store', 'no brand: the store name');
  t.equal(unbranded.givenBrand, undefined);
  t.equal(read({ attributes: { brand: '' } }).brand, 'Acme Store', 'an empty brand names none');
  t.equal(read({ attributes: { brand: 42 } }).brand, 'Acme Store', 'a brand is text');
  t.equal(brandOrStore(null, 'Acme Store'), 'Acme Store', 'the discovery index uses the same rule');
  t.equal(brandOrStore('Lumen', 'Acme Store'), 'Lumen');
});

t.test('availability: as stated when known, else from a stock of 0, else in stock', async (t) => {
  for (const status of AVAILABILITIES) {
    const p = read({ attributes: { availability: status, inventory_quantity: 0 } });
    t.equal(p.availability, status, `${status} is kept, whatever the stock`);
    t.equal(p.available, status !== 'out_of_stock');
  }
  const zero = read({ attributes: { inventory_quantity: 0 } });
  t.equal(zero.availability, 'out_of_stock');
  t.equal(zero.available, false);
  t.equal(read({ attributes: { inventory_quantity: '0' } }).availability, 'out_of_stock');
  t.equal(read({ attributes: { inventory_quantity: 3 } }).availability, 'in_stock');
  t.equal(read({ attributes: {} }).availability, 'in_stock', 'nothing said: in stock');
  const odd = read({ attributes: { availability: 'discontinued', inventory_quantity: 0 } });
  t.equal(odd.availability, 'out_of_stock', 'an unknown statement counts as none');
  t.equal(odd.givenAvailability, 'discontinued', 'but is kept as given');
  t.equal(odd.inventoryQuantity, '0');
});

t.test('URLs: kept as given, and normalised when they are http(s) URLs', async (t) => {
  const p = read({
    attributes: { url: 'HTTPS://Shop.Example.com/a b?q="x"' },
    images: ['https://img.example.com/1.jpg', 'ftp://img.example.com/2.jpg', 'not a url', 7],
  });
  t.equal(p.url, 'HTTPS://Shop.Example.com/a b?q="x"', 'as given');
  t.equal(p.pageUrl, 'https://shop.example.com/a%20b?q=%22x%22', 'normalised');
  t.same(p.images, [
    'https://img.example.com/1.jpg',
    'ftp://img.example.com/2.jpg',
    'not a url',
    '7',
  ]);
  t.same(p.imageUrls, ['https://img.example.com/1.jpg'], 'only http(s) images, normalised');
  t.equal(read({ attributes: { url: 'mailto:a@b.example' } }).pageUrl, undefined);
  t.equal(read({ attributes: {} }).pageUrl, undefined);

  t.equal(normaliseHttpUrl('http://a.example'), 'http://a.example/');
  t.equal(normaliseHttpUrl('javascript:alert(1)'), undefined);
  t.equal(normaliseHttpUrl('file:///etc/passwd'), undefined);
  t.equal(normaliseHttpUrl(''), undefined);
  t.equal(normaliseHttpUrl(3), undefined);
  t.ok(isHttpUrl('https://a.example/x'));
  t.notOk(isHttpUrl('https://'), 'a URL needs a host');
  t.notOk(isHttpUrl('/relative'));
  t.ok(isLinkAsGiven('https://a.example/x?y=1'));
  t.notOk(isLinkAsGiven('https://a.example/a b'), 'a feed link has no white space');
  t.notOk(isLinkAsGiven('ftp://a.example/'));
});

t.test('the variant group is item_group_id, else the product alone', async (t) => {
  const variant = read({ id: 'SHOE-9', attributes: { item_group_id: 'SHOE' } });
  t.equal(variant.itemGroupId, 'SHOE');
  t.equal(variant.variantGroup, 'SHOE');
  const alone = read({ id: 'MUG-1', attributes: {} });
  t.equal(alone.itemGroupId, undefined);
  t.equal(alone.variantGroup, 'MUG-1');
});

t.test('money, columns and attributes are read once, as stored', async (t) => {
  const p = read({
    price_minor: 500,
    currency: 'JPY',
    status: 'draft',
    category: null,
    description: null,
    attributes: { brand: 'B', x_free: { deep: [1, 'two'] } },
  });
  t.same(p.price, { minor: 500, currency: 'JPY' });
  t.equal(p.status, 'draft');
  t.equal(p.category, null);
  t.equal(p.description, null);
  t.same(p.attributes, { brand: 'B', x_free: { deep: [1, 'two'] } });
  t.equal(p.createdAt, '2026-11-21T00:00:00.000Z');
  t.equal(p.updatedAt, '2026-11-22T00:00:00.000Z');
  const broken = readCatalogueProduct(
    { ...catalogueRow(), attributes: 'null', images: '{"not":"a list"}' },
    STORE,
  );
  t.same(broken.attributes, {}, 'attributes that are not an object read as none');
  t.same(broken.images, [], 'images that are not a list read as none');
  t.equal(broken.brand, 'Acme Store');
});
