import t from 'tap';
import { STORED_TIMESTAMP, storedTimestamp } from '../../src/db/timestamps.js';
import { clockAt } from '../support/clock.js';
import { productBody, startTestServer } from '../support/server.js';

t.test('storedTimestamp writes 24 characters of UTC, milliseconds included', async (t) => {
  t.equal(storedTimestamp(Date.UTC(2026, 10, 21, 10)), '2026-11-21T10:00:00.000Z');
  t.equal(storedTimestamp(new Date('2026-11-21T23:59:59.5+01:00')), '2026-11-21T22:59:59.500Z');
  t.throws(() => storedTimestamp(Date.UTC(10000, 0, 1)), /outside years 0000-9999/);
});

t.test(
  'the audit log, the interactions and the events are written in the one format',
  async (t) => {
    // A whole second: a writer that dropped the milliseconds would show here.
    const clock = clockAt('2026-11-21T10:00:00.000Z');
    const s = await startTestServer(t, { AUDIT_FLUSH_MS: '20' }, { now: clock.now });
    const db = s.server.store.db;
    t.equal((await s.request('POST', '/v1/products', { body: productBody() })).status, 201);
    t.equal((await s.request('GET', '/v1/products')).status, 200);
    await (await fetch(`${s.server.discovery.url}/v1/missing.json`)).text();
    await s.server.discovery.flushRequests();
    // The audit writer thread commits every AUDIT_FLUSH_MS; wait for its rows.
    const deadline = Date.now() + 60_000;
    while ((await db.selectFrom('audit_log').select('id').execute()).length < 2) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the audit log');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const written = {
      audit_log: (await db.selectFrom('audit_log').select('created_at as at').execute()).map(
        (r) => r.at,
      ),
      interactions: (await db.selectFrom('interactions').select('at').execute()).map((r) => r.at),
      events: (await db.selectFrom('events').select('created_at as at').execute()).map((r) => r.at),
    };
    for (const [table, stamps] of Object.entries(written)) {
      t.ok(stamps.length > 0, `${table} has rows`);
      for (const at of stamps) t.match(at, STORED_TIMESTAMP, `${table}: ${at}`);
    }
  },
);
