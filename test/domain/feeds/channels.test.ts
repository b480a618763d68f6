import fc from 'fast-check';
import t from 'tap';
import { readCatalogueProduct } from '../../../src/domain/catalogue/product.js';
import {
  CHANNEL_PROFILES,
  channelSettings,
  checkChannelDefinition,
} from '../../../src/domain/feeds/channels/index.js';
import { ChannelMapper } from '../../../src/domain/feeds/channels/mapping.js';
import {
  hasError,
  issueCode,
  type FlatProfile,
} from '../../../src/domain/feeds/channels/profile.js';
import { IssueTally, SAMPLE_IDS } from '../../../src/domain/feeds/channels/tally.js';
import { AppError } from '../../../src/errors.js';
import { catalogueRow } from '../../support/catalogue.js';

const settings = channelSettings(
  { settings: JSON.stringify({ target_countries: ['US', 'CA'] }) },
  { storeName: 'Acme Store', storeUrl: 'https://shop.example', storeCountry: 'US' },
);
const GOOD = {
  brand: 'Northwind',
  url: 'https://shop.example/shoe',
  gtin: '4006381333931',
  condition: 'new',
};
const product = (fields: Parameters<typeof catalogueRow>[0]) =>
  readCatalogueProduct(catalogueRow(fields), settings);
const flat = (name: 'openai' | 'google' | 'stripe') => CHANNEL_PROFILES[name] as FlatProfile;
const codes = (issues: readonly { field: string; problem: string }[]) =>
  issues.map((i) => `${i.field}.${i.problem}`);

t.test(
  'openai: the current field names, one row per variant, countries from the settings',
  async (t) => {
    const { record, issues } = flat('openai').map(
      product({
        id: 'SHOE-9',
        images: ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg'],
        attributes: { ...GOOD, item_group_id: 'SHOE', size: '9', availability: 'preorder' },
      }),
      settings,
    );
    t.same(issues, []);
    t.match(record, {
      item_id: 'SHOE-9',
      title: 'Trail Shoe',
      url: 'https://shop.example/shoe',
      image_url: 'https://img.example.com/1.jpg',
      additional_image_urls: ['https://img.example.com/2.jpg'],
      price: '79.99 USD',
      availability: 'pre_order',
      group_id: 'SHOE',
      listing_has_variations: 'true',
      variant_dict: { size: '9' },
      seller_name: 'Acme Store',
      store_country: 'US',
      target_countries: ['US', 'CA'],
      is_eligible_search: 'true',
      is_eligible_checkout: 'false',
    });
    for (const outdated of ['id', 'link', 'image_link', 'enable_search', 'enable_checkout']) {
      t.notOk(outdated in record, `${outdated} is not written`);
    }
  },
);

t.test(
  'openai: a product without an image or page is refused, errors before warnings',
  async (t) => {
    const { issues } = flat('openai').map(
      product({ images: [], attributes: { gtin: '123', item_group_id: 'G' } }),
      settings,
    );
    t.ok(hasError(issues));
    t.same(codes(issues).slice(0, 2), ['url.missing', 'image_url.missing']);
    t.ok(codes(issues).includes('gtin.invalid'), 'a bad gtin is a warning');
    t.same(issues.find((i) => i.field === 'gtin')?.severity, 'warning');
  },
);

t.test(
  'google: agentic attributes where a product carries them; a bad notice excludes',
  async (t) => {
    const google = flat('google');
    const carried = google.map(
      product({
        attributes: {
          ...GOOD,
          native_commerce: true,
          merchant_item_id: 'CHK-1',
          consumer_notice: { type: 'prop_65', message: 'Contains <b>lead</b>.' },
        },
      }),
      settings,
    );
    t.same(carried.issues, []);
    t.match(carried.record, {
      native_commerce: 'true',
      merchant_item_id: 'CHK-1',
      consumer_notice: {
        consumer_notice_type: 'prop_65',
        consumer_notice_message: 'Contains <b>lead</b>.',
      },
    });
    const plain = google.map(product({ attributes: GOOD }), settings);
    t.same([plain.record.native_commerce, plain.record.consumer_notice], ['', '']);
    const bad = google.map(
      product({ attributes: { ...GOOD, consumer_notice: { type: 'rumour', message: 'x' } } }),
      settings,
    );
    t.same(codes(bad.issues), ['consumer_notice.invalid']);
    t.ok(hasError(bad.issues));
    const long = google.map(product({ id: 'X'.repeat(51), attributes: GOOD }), settings);
    t.same(codes(long.issues), ['id.too_long'], 'Merchant Center caps id at 50');
  },
);

t.test('a format or compression the platform does not take is 422 naming it', async (t) => {
  const refused = (d: Parameters<typeof checkChannelDefinition>[0]) => {
    try {
      checkChannelDefinition(d);
      return undefined;
    } catch (err) {
      t.ok(err instanceof AppError);
      return (err as AppError).field;
    }
  };
  t.equal(refused({ profile: 'openai', format: 'xml', compression: null }), 'format');
  t.equal(refused({ profile: 'google', format: 'xml', compression: 'gzip' }), undefined);
  t.equal(refused({ profile: 'stripe', format: 'csv', compression: 'gzip' }), 'compression');
  t.equal(refused({ profile: 'agentshelf', format: 'tsv', compression: null }), 'format');
  t.equal(refused({ profile: 'acp', format: 'json', compression: null }), undefined);
});

t.test(
  'acp: variants grouped into one Product; a group of excluded variants writes none',
  async (t) => {
    const tally = new IssueTally(true, true);
    const mapper = new ChannelMapper(CHANNEL_PROFILES.acp, settings, tally, false);
    const row = (id: string, group: string, name = `Tee ${id}`) => ({
      ...catalogueRow({ id, name, attributes: { item_group_id: group, color: id } }),
      group_key: group,
    });
    const records = [
      ...mapper.map([row('A1', 'A'), row('A2', 'A'), row('B1', 'B', ' ')]),
      ...mapper.map([row('C1', 'C')]),
      ...mapper.finish(),
    ] as { id: string; variants: { id: string }[] }[];
    t.same(
      records.map((r) => [r.id, r.variants.map((v) => v.id)]),
      [
        ['A', ['A1', 'A2']],
        ['C', ['C1']],
      ],
    );
    t.match(tally.preview(), {
      products: 4,
      included: 3,
      excluded: 1,
      excluded_by_reason: [{ code: 'title.missing', count: 1, product_ids: ['B1'] }],
    });
  },
);

t.test('the tally: every product counted once, excluded under its first error', async (t) => {
  const openai = flat('openai');
  const arbitraryProduct = fc.record({
    image: fc.constantFrom([], ['https://img.example.com/a.jpg'], ['not a url']),
    url: fc.constantFrom(undefined, 'https://shop.example/p', 'ftp://x'),
    price: fc.integer({ min: 0, max: 10_000 }),
    gtin: fc.constantFrom(undefined, '4006381333931', '123'),
  });
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(arbitraryProduct, { maxLength: 60 }), (products) => {
        const tally = new IssueTally(true, true);
        let written = 0;
        products.forEach((p, i) => {
          const item = openai.map(
            product({
              id: `P${i}`,
              price_minor: p.price,
              images: [...p.image],
              attributes: { brand: 'B', ...(p.url ? { url: p.url } : {}), gtin: p.gtin },
            }),
            settings,
          );
          if (tally.add(item.id, item.issues)) written++;
          if (hasError(item.issues)) {
            const first = item.issues.find((x) => x.severity === 'error')!;
            if (issueCode(item.issues[0]!) !== issueCode(first)) throw new Error('errors first');
          }
        });
        const preview = tally.preview();
        const reasons = preview.excluded_by_reason.reduce((n, r) => n + r.count, 0);
        return (
          preview.included === written &&
          preview.included + preview.excluded === products.length &&
          reasons === preview.excluded &&
          preview.excluded_by_reason.every((r) => r.product_ids.length <= SAMPLE_IDS)
        );
      }),
    ),
  );
});
