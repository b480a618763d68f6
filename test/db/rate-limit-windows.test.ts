/**
 * The shared limits (RATE_LIMIT_STORE=database): one statement decides a batch of a key's
 * requests, letting through as many as every window has room for, and SharedRateLimiter
 * decides the requests of a key that arrive together in one such statement, in arrival order.
 * On both stores.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { migrateToLatest } from '../../src/db/migrate.js';
import { decideRequest, type WindowRequest } from '../../src/db/queries/rate-limit-windows.js';
import { openStore } from '../../src/db/store.js';
import { MonthlyUsage } from '../../src/domain/access/monthly-usage.js';
import { BURST_WINDOW_MS, MINUTE_WINDOW_MS } from '../../src/domain/access/plans.js';
import { SharedRateLimiter } from '../../src/domain/access/shared-rate-limiter.js';
import { createLogger } from '../../src/logger.js';
import { testStoreConfig } from '../support/store.js';

const NOW = Date.parse('2026-11-28T12:00:00.000Z');

async function migratedStore(t: Test) {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'store.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  return store;
}

const request = (over: Partial<WindowRequest>): WindowRequest => ({
  keyId: 'key_1',
  nowMs: NOW,
  count: 1,
  burstMs: BURST_WINDOW_MS,
  minuteMs: MINUTE_WINDOW_MS,
  burst: 100,
  perMinute: 7,
  month: '2026-11',
  monthly: null,
  ...over,
});

t.test('a batch lets through what the fullest window has room for', async (t) => {
  const { db } = await migratedStore(t);
  // The key's first batch (the insert): 5 of 7 a minute.
  t.match(await decideRequest(db, request({ count: 5 })), { allowed: 5, minute_count: 5 });
  // 4 more: room for 2.
  t.match(await decideRequest(db, request({ count: 4 })), { allowed: 2, minute_count: 7 });
  t.match(await decideRequest(db, request({ count: 3 })), { allowed: 0, minute_count: 7 });
  // The next minute opens with the batch: 7 of 10.
  t.match(await decideRequest(db, request({ count: 10, nowMs: NOW + MINUTE_WINDOW_MS })), {
    allowed: 7,
    minute_count: 7,
    minute_start_ms: NOW + MINUTE_WINDOW_MS,
  });

  // The burst and the month hold a batch too; a first batch larger than a window.
  const other = { keyId: 'key_2', perMinute: 1000 };
  t.match(await decideRequest(db, request({ ...other, burst: 3, count: 8 })), {
    allowed: 3,
    burst_count: 3,
  });
  await db
    .insertInto('api_key_usage')
    .values({ api_key_id: 'key_3', month: '2026-11', requests: 10 })
    .execute();
  const monthly = { keyId: 'key_3', perMinute: 1000, monthly: 12 };
  t.match(await decideRequest(db, request({ ...monthly, count: 5 })), {
    allowed: 2,
    month_count: 12,
  });
  t.match(await decideRequest(db, request({ ...monthly, count: 1 })), { allowed: 0 });
});

t.test('requests of a key that arrive together are decided in one statement', async (t) => {
  const { db } = await migratedStore(t);
  const usage = new MonthlyUsage(db, createLogger('silent'));
  const limiter = new SharedRateLimiter(db, usage);
  const limits = {
    plan: 'starter' as const,
    perMinute: 5,
    burstPerMinute: 600,
    burst: 100,
    monthly: null,
  };
  // Eight at once: the first is decided alone, the seven that came meanwhile in one statement.
  const decisions = await Promise.all(
    Array.from({ length: 8 }, () => limiter.consume('key_1', limits, NOW)),
  );
  t.same(
    decisions.map((d) => d.refusedBy),
    [null, null, null, null, null, 'minute', 'minute', 'minute'],
    'the first five in arrival order',
  );
  t.same(
    decisions.map((d) => d.remaining),
    [4, 3, 2, 1, 0, 0, 0, 0],
    'each let through sees the minute as it stood after it',
  );
  t.same(
    decisions.slice(5).map((d) => d.retryAfterMs),
    [MINUTE_WINDOW_MS, MINUTE_WINDOW_MS, MINUTE_WINDOW_MS],
  );
  t.equal(usage.requestsOf('key_1', '2026-11'), 5, 'the month counts the five');
  const row = await db
    .selectFrom('rate_limit_windows')
    .selectAll()
    .where('api_key_id', '=', 'key_1')
    .executeTakeFirstOrThrow();
  t.equal(Number(row.minute_count), 5);
  // Two statements: the first decided one request, the second the seven others (2 through).
  t.equal(Number(row.last_allowed), 4, 'the second statement let four through');

  // A failing statement fails every request of its batch, and the next batch is decided.
  await db.schema.dropTable('rate_limit_windows').execute();
  const failed = await Promise.allSettled(
    Array.from({ length: 3 }, () => limiter.consume('key_2', limits, NOW)),
  );
  t.same(
    failed.map((f) => f.status),
    ['rejected', 'rejected', 'rejected'],
  );
});
