import t from 'tap';
import {
  agentBreakdown,
  analyticsOverview,
  dailySeries,
  resolvePeriod,
} from '../../../src/domain/analytics/metrics.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { startTestStore } from '../../support/pipeline.js';

t.test('seed --demo writes sixty days of analytics, the same whatever the date', async (t) => {
  const answers = [];
  for (const now of ['2026-11-25T15:30:00.000Z', '2027-03-02T09:00:00.000Z']) {
    const { db } = await startTestStore(t);
    await seedDemo(db, { currency: 'USD' }, { now: new Date(now) });
    const period = resolvePeriod({}, new Date(now));
    const overview = await analyticsOverview(db, period, { currency: 'USD' });
    const series = await dailySeries(
      db,
      resolvePeriod({ start_date: '2020-01-01', end_date: now }, new Date(now)),
    );
    const withData = series.filter((d) => d.interactions.total > 0).map((d) => d.date);
    t.equal(withData.length, 60, 'sixty days with interactions');
    t.equal(withData.at(-1), now.slice(0, 10), 'ending today');
    const latest = await db
      .selectFrom('interactions')
      .select((eb) => eb.fn.max('at').as('at'))
      .executeTakeFirst();
    t.ok(latest!.at! <= now, 'nothing in the future');
    const agents = await agentBreakdown(db, period);
    for (const kind of ['assistant', 'search', 'training', 'agent'] as const) {
      t.ok(agents.kinds[kind] > 0, `${kind} agents came`);
    }
    t.ok(agents.other.bots > 0 && agents.other.humans > 0, 'bots and people, counted apart');
    t.ok(
      overview.metrics.revenue! > 0 && overview.other_currencies!.length > 0,
      'revenue, and other currencies apart',
    );
    t.ok(overview.trends.ai_interactions!.growth_rate! > 0, 'traffic grows');
    answers.push({
      metrics: overview.metrics,
      trends: overview.trends,
      other: overview.other_currencies,
    });
  }
  t.same(answers[0], answers[1], 'deterministic');
});
