import fc from 'fast-check';
import t from 'tap';
import { readCatalogueProduct } from '../../../src/domain/catalogue/product.js';
import {
  FEED_ISSUES,
  feedItemOf,
  feedSettings,
  toFeedItem,
} from '../../../src/domain/feeds/record.js';
import { catalogueRow } from '../../support/catalogue.js';

const settings = feedSettings('Acme Store', 'https://shop.example');
const item = (fields: Parameters<typeof catalogueRow>[0]) =>
  toFeedItem(catalogueRow(fields), settings);

t.test('a feed record is the catalogue product in the flat feed columns', async (t) => {
  const { record, issues } = item({
    id: 'SHOE-9',
    images: ['https://img.example.com/1.jpg', 'https://img.example.com/a,b.jpg'],
    attributes: {
      brand: 'Northwind',
      url: 'https://shop.example/shoe',
      gtin: '4006381333931',
      condition: 'new',
      item_group_id: 'SHOE',
      size: '9',
      inventory_quantity: 4,
    },
  });
  t.same(record, {
    id: 'SHOE-9',
    title: 'Trail Shoe',
    description: 'A shoe for trails.',
    link: 'https://shop.example/shoe',
    image_link: 'https://img.example.com/1.jpg',
    additional_image_link: 'https://img.example.com/a%2Cb.jpg',
    price: '79.99 USD',
    availability: 'in_stock',
    inventory_quantity: '4',
    brand: 'Northwind',
    product_category: 'Apparel > Shoes',
    gtin: '4006381333931',
    mpn: '',
    condition: 'new',
    item_group_id: 'SHOE',
    color: '',
    size: '9',
    material: '',
    gender: '',
    age_group: '',
    seller_name: 'Acme Store',
    seller_url: 'https://shop.example',
    enable_search: 'true',
    enable_checkout: 'false',
    is_eligible_search: 'true',
    is_eligible_checkout: 'false',
  });
  t.same(issues, []);
});

t.test('no brand: the store name, with a warning', async (t) => {
  const { record, issues } = item({ attributes: { gtin: '4006381333931' } });
  t.equal(record.brand, 'Acme Store');
  t.ok(issues.includes(FEED_ISSUES.brandMissing));
  const control = item({ attributes: { brand: '\u0001', gtin: '4006381333931' } });
  t.equal(control.record.brand, 'Acme Store', 'a brand of forbidden characters only is none');
  t.ok(control.issues.includes(FEED_ISSUES.brandMissing));
});

t.test('availability: stated as stated, else from the stock', async (t) => {
  t.equal(item({ attributes: { inventory_quantity: 0 } }).record.availability, 'out_of_stock');
  t.equal(item({ attributes: { availability: 'preorder' } }).record.availability, 'preorder');
  const odd = item({ attributes: { availability: 'discontinued' } });
  t.equal(odd.record.availability, 'discontinued', 'an unknown value is published as stated');
  t.ok(odd.issues.includes(FEED_ISSUES.availabilityInvalid), 'and reported');
});

t.test('URLs are published as given and checked as given', async (t) => {
  const { record, issues } = item({
    images: ['https://img.example.com/a b.jpg', 'ftp://img.example.com/2.jpg'],
    attributes: { url: 'HTTPS://Shop.Example/a b' },
  });
  t.equal(record.link, 'HTTPS://Shop.Example/a b', 'not normalised');
  t.equal(record.image_link, 'https://img.example.com/a b.jpg');
  t.ok(issues.includes(FEED_ISSUES.linkInvalid));
  t.ok(issues.includes(FEED_ISSUES.imageInvalid));
  t.ok(issues.includes(FEED_ISSUES.additionalImageInvalid));
  const missing = item({ images: [], attributes: {} });
  t.ok(missing.issues.includes(FEED_ISSUES.linkMissing));
  t.ok(missing.issues.includes(FEED_ISSUES.imageMissing));
});

t.test('only active products are searchable', async (t) => {
  t.equal(item({ status: 'draft' }).record.enable_search, 'false');
  t.equal(item({ attributes: { enable_search: false } }).record.enable_search, 'false');
  t.equal(item({ attributes: { enable_checkout: true } }).record.enable_checkout, 'true');
});

t.test('the flags are written under their current names too, with the same values', async (t) => {
  for (const fields of [
    {},
    { status: 'draft' as const },
    { attributes: { enable_search: false } },
    { attributes: { enable_checkout: true } },
    { attributes: { enable_search: false, enable_checkout: true } },
  ]) {
    const { record } = item(fields);
    t.equal(record.is_eligible_search, record.enable_search, JSON.stringify(fields));
    t.equal(record.is_eligible_checkout, record.enable_checkout, JSON.stringify(fields));
  }
  t.equal(item({}).record.is_eligible_search, 'true');
  t.equal(item({ attributes: { enable_checkout: true } }).record.is_eligible_checkout, 'true');
});

t.test(
  'the row cleaner only skips work: any text gives the record of the full drop rule',
  async (t) => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'binary', maxLength: 12 }),
        (name, brand) => {
          const row = catalogueRow({
            name,
            attributes: { brand, url: `https://a.example/${name}` },
          });
          const fast = toFeedItem(row, settings);
          const full = feedItemOf(readCatalogueProduct(row, settings), settings);
          t.same(fast, full);
        },
      ),
      { numRuns: 300 },
    );
  },
);
