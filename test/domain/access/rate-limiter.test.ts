import fc from 'fast-check';
import path from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { openStore } from '../../../src/db/store.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { monthOf, MonthlyUsage } from '../../../src/domain/access/monthly-usage.js';
import { limitsOfKey, type KeyLimits } from '../../../src/domain/access/plans.js';
import { RateLimiter } from '../../../src/domain/access/rate-limiter.js';
import { testStoreConfig } from '../../support/store.js';

const START = Date.parse('2026-11-10T12:00:00.000Z');

async function openUsage(t: Test) {
  const dir = t.testdir({});
  const store = openStore(await testStoreConfig(path.join(dir, 'db.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  return { store, usage: new MonthlyUsage(store.db, pino({ level: 'silent' })) };
}

function limitsOf(perMinute: number, burstPerMinute: number, monthly: number | null): KeyLimits {
  return limitsOfKey({ plan: 'starter', rpm: perMinute, burst: burstPerMinute, monthly });
}

const scenario = fc.record({
  perMinute: fc.integer({ min: 1, max: 30 }),
  burstPerMinute: fc.integer({ min: 6, max: 120 }),
  // Gaps between requests: many at once, some seconds apart, a few minutes apart.
  gaps: fc.array(
    fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 4000 }),
      fc.integer({ min: 1, max: 90_000 }),
    ),
    { maxLength: 300 },
  ),
});

t.test(
  'no minute window admits more than its limit, and Remaining counts down within it',
  async (t) => {
    const { usage } = await openUsage(t);
    fc.assert(
      fc.property(scenario, ({ perMinute, burstPerMinute, gaps }) => {
        const limiter = new RateLimiter(usage);
        const limits = limitsOf(perMinute, burstPerMinute, null);
        const keyId = `key_${Math.random()}`;
        let now = START;
        const windows = new Map<number, number[]>();
        for (const gap of gaps) {
          now += gap;
          const d = limiter.consume(keyId, limits, now);
          if (d.refusedBy !== null) continue;
          const times = windows.get(d.resetAtMs) ?? [];
          times.push(now);
          windows.set(d.resetAtMs, times);
          if (d.remaining !== perMinute - times.length) return false;
          if (now < d.resetAtMs - 60_000 || now >= d.resetAtMs) return false;
        }
        return [...windows.values()].every((times) => times.length <= perMinute);
      }),
    );
  },
);

t.test('no 10-second stretch admits more than twice the burst allowance', async (t) => {
  const { usage } = await openUsage(t);
  fc.assert(
    fc.property(scenario, ({ perMinute, burstPerMinute, gaps }) => {
      const limiter = new RateLimiter(usage);
      const limits = limitsOf(perMinute * 100, burstPerMinute, null);
      const keyId = `key_${Math.random()}`;
      let now = START;
      const accepted: number[] = [];
      for (const gap of gaps) {
        now += gap;
        if (limiter.consume(keyId, limits, now).refusedBy === null) accepted.push(now);
      }
      // Fixed windows: at most `burst` in each, so at most twice that across a window's end.
      return accepted.every(
        (at, i) => accepted.slice(i).filter((x) => x < at + 10_000).length <= 2 * limits.burst,
      );
    }),
  );
});

t.test('waiting Retry-After (whole seconds, rounded up) is always enough', async (t) => {
  const { usage } = await openUsage(t);
  fc.assert(
    fc.property(scenario, ({ perMinute, burstPerMinute, gaps }) => {
      const limiter = new RateLimiter(usage);
      const limits = limitsOf(perMinute, burstPerMinute, null);
      const keyId = `key_${Math.random()}`;
      let now = START;
      for (const gap of gaps) {
        now += gap;
        const d = limiter.consume(keyId, limits, now);
        if (d.refusedBy !== null) {
          if (d.retryAfterMs <= 0) return false;
          now += Math.ceil(d.retryAfterMs / 1000) * 1000;
          if (limiter.consume(keyId, limits, now).refusedBy !== null) return false;
        }
      }
      return true;
    }),
  );
});

t.test('a refused request counts against no limit', async (t) => {
  const { usage } = await openUsage(t);
  const limiter = new RateLimiter(usage);
  const limits = limitsOf(2, 600, 3);
  const month = monthOf(START).id;
  t.equal(limiter.consume('k', limits, START).refusedBy, null);
  t.equal(limiter.consume('k', limits, START).refusedBy, null);
  for (let i = 0; i < 5; i++) t.equal(limiter.consume('k', limits, START + i).refusedBy, 'minute');
  t.equal(usage.requestsOf('k', month), 2);
  t.equal(limiter.consume('k', limits, START + 60_000).remaining, 1);
  t.equal(usage.requestsOf('k', month), 3);
  t.equal(limiter.consume('k', limits, START + 60_001).refusedBy, 'month');
});

t.test('monthly counts are written as deltas, so two writers on one store add up', async (t) => {
  const { store, usage } = await openUsage(t);
  const other = new MonthlyUsage(store.db, pino({ level: 'silent' }));
  const month = monthOf(START).id;
  for (let i = 0; i < 3; i++) usage.add('k', month);
  for (let i = 0; i < 4; i++) other.add('k', month);
  await usage.flush();
  await other.flush();
  t.equal(other.requestsOf('k', month), 7, 'a flush reads back the total of every writer');
  usage.add('k', month);
  await usage.flush();
  t.equal(usage.requestsOf('k', month), 8);
  const fresh = new MonthlyUsage(store.db, pino({ level: 'silent' }));
  await fresh.load(month);
  t.equal(fresh.requestsOf('k', month), 8);
  t.equal(fresh.requestsOf('k', '2026-12'), 0);
});

t.test('monthOf gives UTC calendar months', async (t) => {
  t.same(monthOf(Date.parse('2026-12-31T23:59:59.999Z')), {
    id: '2026-12',
    startMs: Date.parse('2026-12-01T00:00:00Z'),
    endMs: Date.parse('2027-01-01T00:00:00Z'),
  });
  t.equal(monthOf(Date.parse('2027-01-01T00:00:00.000Z')).id, '2027-01');
  t.equal(monthOf(Date.parse('2028-02-29T12:00:00Z')).endMs, Date.parse('2028-03-01T00:00:00Z'));
});

t.test('a plan name this build does not know gets the starter limits, never none', async (t) => {
  t.same(limitsOfKey({ plan: 'platinum', rpm: null, burst: null, monthly: null }), {
    plan: 'starter',
    perMinute: 100,
    burstPerMinute: 200,
    burst: 33,
    monthly: 10_000,
  });
  t.equal(limitsOfKey({ plan: 'scale', rpm: null, burst: null, monthly: null }).monthly, null);
});
