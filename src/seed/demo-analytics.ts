import { withTransaction, type Executor } from '../db/transaction.js';
import type { AccessRecord } from '../domain/analytics/access-record.js';
import {
  recordAccess,
  recordEvents,
  type AnalyticsEvent,
} from '../domain/analytics/interactions.js';
import { slugify } from '../domain/discovery/slug.js';
import { toMinorUnits } from '../domain/money.js';
import type { ProductCreateInput } from '../domain/products/schemas.js';

const DAY_MS = 86_400_000;

/** A small seeded PRNG (mulberry32): the same seed gives the same demo traffic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Who visits, with a weight: real agent strings of each kind, a bot and people. */
const VISITORS: [weight: number, userAgent: string, signatureAgent?: string][] = [
  [
    14,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  ],
  [
    10,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  ],
  [4, 'CCBot/2.0 (https://commoncrawl.org/faq/)'],
  [
    9,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot',
  ],
  [
    6,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
  ],
  [
    4,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +https://www.anthropic.com)',
  ],
  [
    12,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  ],
  [
    5,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  ],
  [
    5,
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
  ],
  [
    3,
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    '"https://shopping-agent.example"',
  ],
  [6, 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  [
    8,
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  ],
];
const ASSISTANTS = ['ChatGPT-User', 'Claude-User', 'Perplexity-User'];

function pick<T>(random: () => number, items: readonly [number, ...unknown[]][]): T {
  const total = items.reduce((n, [w]) => n + w, 0);
  let r = random() * total;
  for (const item of items) {
    r -= item[0];
    if (r < 0) return item as T;
  }
  return items[items.length - 1] as T;
}

/**
 * Sixty days of plausible analytics for the demo catalogue, ending now: agents fetching the
 * registry (growing about 1.5% a day), views and clicks reported for products, and a few
 * conversions in each product's own currency. Written through recordAccess and recordEvents,
 * so the rollups hold. The same seed gives the same numbers whatever the date.
 */
export async function seedDemoAnalytics(
  db: Executor,
  products: ProductCreateInput[],
  options: { currency: string; now: Date; days?: number; seed?: number },
): Promise<{ interactions: number; conversions: number }> {
  const random = prng(options.seed ?? 13);
  const days = options.days ?? 60;
  const today = Date.UTC(
    options.now.getUTCFullYear(),
    options.now.getUTCMonth(),
    options.now.getUTCDate(),
  );
  const brands = [
    ...new Set(products.flatMap((p) => (p.attributes?.brand ? [p.attributes.brand] : []))),
  ].map(slugify);
  const records: AccessRecord[] = [];
  const events: AnalyticsEvent[] = [];
  for (let d = days - 1; d >= 0; d--) {
    const start = today - d * DAY_MS;
    // Today only up to now, so nothing lies in the future.
    const span = Math.max(1, Math.min(DAY_MS, options.now.getTime() - start));
    const at = () => new Date(start + Math.floor(random() * span));
    const growth = Math.pow(1.015, days - 1 - d);
    const requests = Math.round((40 + random() * 20) * growth);
    for (let i = 0; i < requests; i++) {
      const [, userAgent, signatureAgent] = pick<[number, string, string?]>(random, VISITORS);
      const brand = brands[Math.floor(random() * brands.length)]!;
      const r = random();
      const path =
        r < 0.2
          ? '/v1/index.json'
          : r < 0.45
            ? `/v1/brands/${brand}`
            : r < 0.8
              ? `/v1/feeds/${brand}/products.json`
              : `/v1/feeds/${brand}/products.ndjson`;
      const status = random() < 0.15 ? 304 : random() < 0.02 ? 404 : 200;
      records.push({
        at: at(),
        method: 'GET',
        path,
        status,
        bytes: status === 200 ? 2_000 + Math.floor(random() * 40_000) : 0,
        userAgent,
        signatureAgent: signatureAgent ?? null,
        dedupeKey: null,
        source: 'server',
      });
    }
    const views = Math.round((8 + random() * 6) * growth);
    for (let i = 0; i < views; i++) {
      const product = products[Math.floor(random() * products.length)]!;
      const agent = ASSISTANTS[Math.floor(random() * ASSISTANTS.length)]!;
      const when = at();
      events.push({ type: 'view', product_id: product.id!, occurred_at: when, agent });
      if (random() < 0.3) {
        events.push({ type: 'click', product_id: product.id!, occurred_at: when, agent });
        if (random() < 0.25) {
          const currency = product.currency ?? options.currency;
          events.push({
            type: 'conversion',
            product_id: product.id!,
            occurred_at: when,
            agent,
            amount_minor: toMinorUnits(product.price, currency),
            currency,
          });
        }
      }
    }
  }
  const recorded = await withTransaction(db, async (trx) => {
    const a = await recordAccess(trx, records, { currency: options.currency });
    const e = await recordEvents(trx, events, { currency: options.currency });
    return a.stored + e.stored;
  });
  return {
    interactions: recorded,
    conversions: events.filter((e) => e.type === 'conversion').length,
  };
}
