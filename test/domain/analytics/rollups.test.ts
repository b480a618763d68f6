import fc from 'fast-check';
import { sql } from 'kysely';
import t from 'tap';
import { dialectOf } from '../../../src/db/dialect.js';
import type { Db } from '../../../src/db/store.js';
import type { AccessRecord } from '../../../src/domain/analytics/access-record.js';
import {
  recordAccess,
  recordEvents,
  type AnalyticsEvent,
} from '../../../src/domain/analytics/interactions.js';
import { startTestStore } from '../../support/pipeline.js';

const USER_AGENTS = [
  null,
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Mozilla/5.0 (compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
  'curl/8.4.0',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
];
const PATHS = ['/v1/index.json', '/v1/brands/acme', '/v1/feeds/zeta/products.ndjson', '/v1/nope'];
const START = Date.parse('2026-11-20T00:00:00.000Z');
const at = fc.integer({ min: 0, max: 4 * 86_400_000 - 1 }).map((ms) => new Date(START + ms));

const accessRecord: fc.Arbitrary<AccessRecord> = fc.record({
  at,
  method: fc.constantFrom('GET', 'HEAD'),
  path: fc.constantFrom(...PATHS),
  status: fc.constantFrom(200, 304, 404, 429),
  bytes: fc.integer({ min: 0, max: 50_000 }),
  userAgent: fc.constantFrom(...USER_AGENTS),
  signatureAgent: fc.constantFrom(null, '"https://agent.example"'),
  dedupeKey: fc.option(
    fc.integer({ min: 0, max: 15 }).map((n) => `ray-${n}`),
    { nil: null },
  ),
  source: fc.constantFrom('server' as const, 'cloudflare' as const, 'export' as const),
});

const event: fc.Arbitrary<AnalyticsEvent> = fc
  .record({
    type: fc.constantFrom('view' as const, 'click' as const, 'conversion' as const),
    product_id: fc.constantFrom('a', 'b', 'c'),
    occurred_at: at,
    agent: fc.constantFrom(null, 'ChatGPT-User', 'my-agent'),
    amount_minor: fc.integer({ min: 0, max: 1_000_000 }),
    currency: fc.constantFrom('USD', 'EUR'),
    id: fc.option(
      fc.integer({ min: 0, max: 15 }).map((n) => `evt-${n}`),
      { nil: undefined },
    ),
  })
  .map((e) => {
    const { amount_minor, currency, id, ...rest } = e;
    return {
      ...rest,
      ...(id === undefined ? {} : { id }),
      ...(e.type === 'conversion' ? { amount_minor, currency } : {}),
    };
  });

const batch = fc.oneof(
  fc.array(accessRecord, { maxLength: 20 }).map((records) => ({ records })),
  fc.array(event, { maxLength: 20 }).map((events) => ({ events })),
);

const AI = "('assistant', 'search', 'training', 'agent')";

async function recount(db: Db) {
  const day = dialectOf(db).dayOf('at');
  const traffic = await sql<Record<string, unknown>>`
    select ${day} as day, source, coalesce(brand, '') as brand, coalesce(agent, '') as agent,
      coalesce(operator, '') as operator, kind, count(*) as interactions,
      sum(case when (status between 200 and 299) or status = 304 then 1 else 0 end) as fetched,
      sum(verified) as verified, sum(coalesce(bytes, 0)) as bytes
    from interactions where event_type is null or event_type <> 'conversion'
    group by ${day}, source, coalesce(brand, ''), coalesce(agent, ''), coalesce(operator, ''), kind
    order by 1, 2, 3, 4, 5, 6`.execute(db);
  const counted = (expr: string) => sql.raw(`sum(case when ${expr} then 1 else 0 end)`);
  const ai = `event_type <> 'conversion' and kind in ${AI}`;
  const products = await sql<Record<string, unknown>>`
    select ${day} as day, product_id,
      ${counted(ai)} as interactions,
      ${counted(`${ai} and kind = 'assistant'`)} as assistant,
      ${counted(`${ai} and kind = 'search'`)} as search,
      ${counted(`${ai} and kind = 'training'`)} as training,
      ${counted(`${ai} and kind = 'agent'`)} as agent,
      ${counted(`${ai} and event_type = 'view'`)} as views,
      ${counted(`${ai} and event_type = 'click'`)} as clicks,
      ${counted(`event_type = 'conversion'`)} as conversions,
      sum(case when event_type = 'conversion' and currency = 'USD' then amount_minor else 0 end)
        as revenue_minor
    from interactions where product_id is not null
    group by ${day}, product_id order by 1, 2`.execute(db);
  const revenue = await sql<Record<string, unknown>>`
    select ${day} as day, currency, product_id, count(*) as conversions,
      sum(amount_minor) as amount_minor
    from interactions where event_type = 'conversion'
    group by ${day}, currency, product_id order by 1, 2, 3`.execute(db);
  return { traffic: traffic.rows, products: products.rows, revenue: revenue.rows };
}

async function rollups(db: Db) {
  return {
    traffic: await db
      .selectFrom('analytics_daily_traffic')
      .selectAll()
      .orderBy(['day', 'source', 'brand', 'agent', 'operator', 'kind'])
      .execute(),
    products: await db
      .selectFrom('analytics_daily_products')
      .selectAll()
      .orderBy(['day', 'product_id'])
      .execute(),
    revenue: await db
      .selectFrom('analytics_daily_revenue')
      .selectAll()
      .orderBy(['day', 'currency', 'product_id'])
      .execute(),
  };
}

const numbers = (rows: Record<string, unknown>[]) =>
  rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]),
    ),
  );

t.test('the rollups always equal a recount of the raw rows', async (t) => {
  const { db } = await startTestStore(t);
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), async (batches) => {
      for (const table of [
        'interactions',
        'analytics_daily_traffic',
        'analytics_daily_products',
        'analytics_daily_revenue',
      ] as const) {
        await db.deleteFrom(table).execute();
      }
      let offered = 0;
      let stored = 0;
      for (const b of batches) {
        const result =
          'records' in b
            ? await recordAccess(db, b.records, { currency: 'USD' })
            : await recordEvents(db, b.events, { currency: 'USD' });
        offered += 'records' in b ? b.records.length : b.events.length;
        stored += result.stored;
        t.equal(
          result.stored + result.duplicates,
          'records' in b ? b.records.length : b.events.length,
        );
      }
      const raw = await db.selectFrom('interactions').select('id').execute();
      if (raw.length !== stored) return false;
      const expected = await recount(db);
      const actual = await rollups(db);
      runs++;
      t.ok(offered >= stored);
      return (
        JSON.stringify(numbers(actual.traffic)) === JSON.stringify(numbers(expected.traffic)) &&
        JSON.stringify(numbers(actual.products)) === JSON.stringify(numbers(expected.products)) &&
        JSON.stringify(numbers(actual.revenue)) === JSON.stringify(numbers(expected.revenue))
      );
    }),
    { numRuns: 40, seed: 20261125 },
  );
  t.equal(runs, 40);
});
