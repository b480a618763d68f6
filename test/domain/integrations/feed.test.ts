import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import t from 'tap';
import { createHttpClient } from '../../../src/net/http-client.js';
import { feedSource } from '../../../src/domain/integrations/platforms/feed.js';
import {
  type SourceContext,
  type SourceItem,
} from '../../../src/domain/integrations/source.js';
import { startFeedServer, type FeedServer } from '../../support/feed-server.js';

const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/feeds/', import.meta.url));
const fixture = (name: string) => readFileSync(FIXTURES + name, 'utf8');

/** A source context as the sync gives one, with state kept between runs like the sync does. */
function context(
  settings: Record<string, unknown>,
  saved: { state: Record<string, unknown> } = { state: {} },
): SourceContext & { saved: { state: Record<string, unknown> } } {
  const controller = new AbortController();
  let pending: Record<string, unknown> | undefined;
  return {
    integrationId: 'int_test',
    shopDomain: '127.0.0.1',
    credentials: null,
    settings,
    http: createHttpClient({ allowPrivate: true, sleep: async () => {} }),
    defaultCurrency: 'USD',
    signal: controller.signal,
    logger: pino({ level: 'silent' }),
    now: () => new Date('2026-11-25T12:00:00Z'),
    sleep: async () => {},
    state: saved.state,
    setState(state) {
      pending = state;
      // The sync saves the state once the run has finished well: the tests do after collect().
      saved.state = { ...(pending ?? {}) };
    },
    saveCredentials: async () => {},
    saved,
  };
}

async function collect(ctx: SourceContext): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of feedSource.items(ctx)) out.push(item);
  return out;
}

const products = (items: SourceItem[]) =>
  items.flatMap((i) => (i.kind === 'product' ? [{ id: i.externalId, ...i.product }] : []));
const errors = (items: SourceItem[]) => items.filter((i) => i.kind === 'error');

async function read(server: FeedServer, path: string, body: string, settings = {}) {
  server.set(path, body);
  return collect(context({ url: server.url(path), ...settings }));
}

t.test('Google Merchant Center RSS 2.0 with g: elements', async (t) => {
  const server = await startFeedServer(t);
  const items = await read(server, '/google.xml', fixture('google-rss.xml'));
  t.same(errors(items), []);
  t.same(products(items), [
    {
      id: 'TV_123456',
      name: 'LG 22LB4510 - 22" LED TV - 1080p (FullHD)',
      price: '159.00',
      currency: 'USD',
      description:
        'Attractively styled and boasting stunning picture quality, the LG 22LB4510 - 22" LED TV - 1080p (FullHD) is an excellent television/monitor. The LG 22LB4510 - 22" LED TV - 1080p (FullHD) sports a widescreen 1080p panel, perfect for watching movies in their original format, whilst also providing plenty of working space for your other applications.',
      status: 'active',
      category: 'Consumer Electronics > TVs > Flat Panel TVs',
      images: [
        'https://images.example.com/TV_123456.png',
        'https://images.example.com/TV_123456_side.png',
        'https://images.example.com/TV_123456_back.png',
      ],
      attributes: {
        google_product_category: 'Electronics > Video > Televisions > Flat Panel Televisions',
        url: 'https://www.example.com/electronics/tv/22LB4510.html',
        brand: 'LG',
        mpn: '22LB4510/US',
        condition: 'new',
        gtin: '00012345600012',
        availability: 'in_stock',
      },
    },
    {
      id: 'DRESS_1_S',
      name: "Women's Summer Dress <Red> & White, S",
      price: '39.90',
      currency: 'EUR',
      description: 'Light cotton dress & belt \u2014 caf\u00e9 print, size S.',
      status: 'active',
      category: 'Apparel > Dresses',
      images: ['https://images.example.com/DRESS_1.jpg'],
      attributes: {
        original_price: '49.90',
        url: 'https://www.example.com/clothing/dress-1?size=s&color=red',
        brand: 'Sunwear',
        mpn: 'SW-DRESS-1-S',
        color: 'Red',
        size: 'S',
        item_group_id: 'DRESS_1',
        gender: 'female',
        age_group: 'adult',
        availability: 'out_of_stock',
        features: ['100% cotton', 'Machine washable, 30 \u00b0C'],
      },
    },
  ]);
});
