import t from 'tap';
import { recordAccess } from '../../../src/domain/analytics/interactions.js';
import { purgeInteractions } from '../../../src/domain/analytics/retention.js';
import { clockAt } from '../../support/clock.js';
import { startTestServer } from '../../support/server.js';
import { startTestStore } from '../../support/pipeline.js';

const GPT = 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const record = (at: string) => ({
  at: new Date(at),
  method: 'GET',
  path: '/v1/feeds/acme/products.json',
  status: 200,
  bytes: 10,
  userAgent: GPT,
  dedupeKey: null,
  source: 'server' as const,
});

t.test('the purge deletes raw rows before the cutoff, in batches; rollups stay', async (t) => {
  const { db } = await startTestStore(t);
  const stamps = [
    '2025-01-01T00:00:00.000Z',
    '2025-06-01T00:00:00.000Z',
    '2025-10-21T23:59:59.999Z',
    '2025-10-22T00:00:00.000Z',
    '2026-11-25T00:00:00.000Z',
  ];
  await recordAccess(db, stamps.map(record));
  const rollup = await db
    .selectFrom('analytics_daily_traffic')
    .selectAll()
    .orderBy('day')
    .execute();
  t.equal(await purgeInteractions(db, new Date('2025-10-22T00:00:00.000Z'), 2), 3);
  const left = await db.selectFrom('interactions').select('at').orderBy('at').execute();
  t.same(
    left.map((r) => r.at),
    stamps.slice(3),
  );
  t.same(
    await db.selectFrom('analytics_daily_traffic').selectAll().orderBy('day').execute(),
    rollup,
  );
});

t.test('serve purges interactions older than ANALYTICS_RETENTION_DAYS', async (t) => {
  const clock = clockAt('2026-11-25T12:00:00.000Z');
  const s = await startTestServer(t, { ANALYTICS_RETENTION_DAYS: '30' }, { now: clock.now });
  const db = s.server.store.db;
  // The schedule's own sweeps (a second after start, then daily) are stopped: this test sweeps.
  await s.server.analyticsRetention.stop();
  await recordAccess(db, [
    record('2026-10-26T11:59:59.999Z'),
    record('2026-10-26T12:00:00.000Z'),
    record('2026-11-25T11:00:00.000Z'),
  ]);
  t.equal(await s.server.analyticsRetention.sweep(), 1, 'only the row past 30 days');
  clock.set('2026-11-26T12:00:00.000Z');
  t.equal(await s.server.analyticsRetention.sweep(), 1, 'a day later, the next one');
  const left = await db.selectFrom('interactions').select('at').execute();
  t.same(
    left.map((r) => r.at),
    ['2026-11-25T11:00:00.000Z'],
  );
  const res = await s.request('GET', '/v1/analytics?start_date=2026-10-26&end_date=2026-11-25');
  t.equal(res.body.analytics.metrics.ai_interactions, 3, 'the metrics still count them');
});
