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

/** What the WHATWG parser makes of an http(s) URL (normaliseHttpUrl without its fast path). */
function parsedHref(value: string): string | undefined {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname
      ? url.href
      : undefined;
  } catch {
    return undefined;
  }
}

t.test('a URL already normalised is given back as the parser would give it', async (t) => {
  for (const url of [
    'https://shop.example.com/products/syn_00000001',
    'http://a.example/x?y=1&z=%41#top',
    "https://a.example/it's(1)/~a;b=c:d@e",
    'https://a.example/?',
    'https://a.example/#',
  ]) {
    t.equal(normaliseHttpUrl(url), url, url);
  }
  // What the parser changes: each goes to the parser, and comes out as it says.
  for (const url of [
    'https://a.example',
    'HTTPS://A.example/x',
    'https://a.example:443/x',
    'https://a.example:8080/x',
    'https://user:pw@a.example/x',
    'https://1.2.3.4/x',
    'https://0x7f.1/x',
    'https://a.example./x',
    'https://xn--nxasmq6b.example/x',
    'https://a.example/./x/../y',
    'https://a.example/%2e/x',
    'https://a.example/a b?q="x"',
    "https://a.example/x?it's",
    'https://a.example/x\\y',
    'https://a.example/\tx',
    'https://a.example/é',
  ]) {
    t.equal(normaliseHttpUrl(url), parsedHref(url), url);
  }
  // And anything made of the characters that matter agrees with the parser.
  const pieces = [
    'a',
    'z',
    '0',
    '9',
    '-',
    '.',
    '..',
    '/',
    '?',
    '#',
    '%',
    '%2e',
    '%41',
    'xn--',
    ':',
    '@',
  ];
  const more = ['~', '!', '$', '&', "'", '(', '*', '+', ',', ';', '=', '_', ' ', '"', '<', '`'];
  const all = [...pieces, ...more, '\\', '\t', 'A', 'é', ':80', '1.2', 'b.c'];
  let seed = 22;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let disagreements = 0;
  for (let i = 0; i < 20_000; i++) {
    let url = next(2) === 0 ? 'http://' : 'https://';
    for (let n = 1 + next(8); n > 0; n--) url += all[next(all.length)];
    if (normaliseHttpUrl(url) !== parsedHref(url)) disagreements++;
  }
  t.equal(disagreements, 0, 'the fast path never disagrees with the parser');
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
