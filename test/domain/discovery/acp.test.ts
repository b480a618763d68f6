import fc from 'fast-check';
import t from 'tap';
import { readCatalogueProduct } from '../../../src/domain/catalogue/product.js';
import { sharedTitle, toAcpProduct, toAcpVariant } from '../../../src/domain/discovery/acp.js';
import { catalogueRow } from '../../support/catalogue.js';
import { loadAcpProductValidator } from '../../support/discovery.js';
import { product as productSketch, productBody } from '../../support/products.js';

const STORE = { storeName: 'Acme Store' };
const variantOf = (fields: Parameters<typeof catalogueRow>[0]) =>
  toAcpVariant(readCatalogueProduct(catalogueRow(fields), STORE), STORE.storeName);

t.test('an ACP Variant is the catalogue product, URLs normalised', async (t) => {
  const v = variantOf({
    id: 'SHOE-9',
    images: ['https://img.example.com/a b.jpg', 'not a url'],
    attributes: {
      url: 'HTTPS://Shop.Example/shoe',
      gtin: '4006381333931',
      condition: 'new',
      size: '9',
      color: ' ',
      inventory_quantity: 0,
    },
  });
  t.same(v, {
    id: 'SHOE-9',
    title: 'Trail Shoe',
    description: { plain: 'A shoe for trails.' },
    url: 'https://shop.example/shoe',
    barcodes: [{ type: 'GTIN', value: '4006381333931' }],
    price: { amount: 7999, currency: 'USD' },
    availability: { available: false, status: 'out_of_stock' },
    categories: [{ value: 'Apparel > Shoes', taxonomy: 'merchant' }],
    condition: ['new'],
    variant_options: [{ name: 'Size', value: '9' }],
    media: [{ type: 'image', url: 'https://img.example.com/a%20b.jpg', alt_text: 'Trail Shoe' }],
    seller: { name: 'Acme Store' },
  });
  const bare = variantOf({
    description: ' ',
    category: null,
    images: [],
    attributes: { url: 'x' },
  });
  t.same(Object.keys(bare), ['id', 'title', 'price', 'availability', 'seller'], 'nothing empty');
  t.same(bare.availability, { available: true, status: 'in_stock' });
});

t.test('variants of one group make one ACP Product', async (t) => {
  const nine = variantOf({
    id: 'SHOE-9',
    name: 'Trail Shoe - 9',
    attributes: { item_group_id: 'SHOE' },
  });
  const ten = variantOf({
    id: 'SHOE-10',
    name: 'Trail Shoe - 10',
    attributes: { item_group_id: 'SHOE' },
  });
  const p = toAcpProduct('SHOE', [nine, ten]);
  t.equal(p.id, 'SHOE');
  t.equal(p.title, 'Trail Shoe');
  t.equal(p.variants.length, 2);
});

/** sharedTitle as it was first written: every title split into its words and compared. */
function sharedTitleBySplitting(titles: string[]): string {
  const first = titles[0] ?? '';
  if (titles.every((t) => t === first)) return first;
  const split = titles.map((t) => t.split(/(\s+)/));
  const common: string[] = [];
  for (let i = 0; i < split[0]!.length; i++) {
    const word = split[0]![i]!;
    if (!split.every((words) => words[i] === word)) break;
    common.push(word);
  }
  const prefix = common
    .join('')
    .replace(/[\s\-\u2013\u2014/,:;(|]+$/u, '')
    .trim();
  return prefix.length >= 3 ? prefix : first;
}

t.test(
  'a group title is what splitting every title into words and comparing them gives',
  async (t) => {
    // Titles made of few characters (spaces of several kinds, separators, a surrogate pair), so
    // that they share long prefixes and their words split in every way.
    const unit = fc.constantFrom(
      'a',
      'b',
      'Ab',
      ' ',
      '  ',
      '\t',
      '\u00a0',
      '\u2003',
      '\ufeff',
      '-',
      '\u2013',
      '/',
      ':',
      '(',
      '9',
      '10',
      '\u{1F600}',
    );
    const title = fc.array(unit, { maxLength: 12 }).map((units) => units.join(''));
    const titles = fc.oneof(
      fc.array(title, { maxLength: 5 }),
      // Variants named as shops name them: a shared stem and a distinguishing tail.
      fc
        .tuple(title, fc.array(title, { minLength: 1, maxLength: 4 }))
        .map(([stem, tails]) => tails.map((tail) => stem + tail)),
    );
    fc.assert(
      fc.property(titles, (ts) => sharedTitle(ts) === sharedTitleBySplitting(ts)),
      { numRuns: 20_000, seed: 22 },
    );
    t.equal(sharedTitle(['Trail Shoe - 9', 'Trail Shoe - 10']), 'Trail Shoe');
    t.equal(
      sharedTitle(['Synthetic product 00000001 large', 'Synthetic product 00000002 large']),
      'Synthetic product',
    );
  },
);

t.test(
  'the ACP Product of any product the API accepts validates against the ACP schema',
  async (t) => {
    const validate = loadAcpProductValidator();
    let n = 0;
    fc.assert(
      fc.property(
        productSketch,
        fc.record({
          url: fc.option(fc.webUrl(), { nil: undefined }),
          availability: fc.option(
            fc.constantFrom('in_stock', 'out_of_stock', 'preorder', 'backorder'),
            { nil: undefined },
          ),
          inventory_quantity: fc.option(fc.nat(5), { nil: undefined }),
          item_group_id: fc.option(fc.constantFrom('G1', 'G2'), { nil: undefined }),
          size: fc.option(fc.constantFrom('S', 'M'), { nil: undefined }),
        }),
        (sketch, known) => {
          const body = productBody(sketch);
          const attributes = {
            ...(body.attributes as object),
            ...JSON.parse(JSON.stringify(known)),
          };
          const row = catalogueRow({
            id: `P${n++}`,
            name: sketch.name,
            description: sketch.description,
            price_minor: Math.round(sketch.share * 1000),
            currency: sketch.currency,
            category: (body.category as string | null) ?? null,
            images: sketch.images,
            attributes,
          });
          const product = readCatalogueProduct(row, STORE);
          const acp = toAcpProduct(product.variantGroup, [toAcpVariant(product, STORE.storeName)]);
          if (!validate(acp)) {
            throw new Error(`${JSON.stringify(acp)}: ${JSON.stringify(validate.errors)}`);
          }
        },
      ),
      { numRuns: 200 },
    );
    t.equal(n, 200, 'every generated product validated');
  },
);
