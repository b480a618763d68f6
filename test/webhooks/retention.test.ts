import t from 'tap';
import { startReceiver, waitUntil } from '../support/receiver.js';
import { productBody, startTestServer } from '../support/server.js';

const DAY = 24 * 60 * 60 * 1000;

t.test(
  'settled deliveries older than 30 days are purged with their attempts; pending ones stay',
  async (t) => {
    let now = Date.parse('2026-11-21T10:00:00.000Z');
    // The failing endpoint's retry is due 60 days on, past the jump below, whenever its lane
    // reads the clock: it is not retried here, so its old delivery stays pending and the new
    // one waits behind it.
    const s = await startTestServer(
      t,
      { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: String(60 * 24 * 60 * 60) },
      { now: () => new Date(now) },
    );
    const ok = await startReceiver(t);
    const down = await startReceiver(t, () => ({ status: 500 }));
    const okHook = await s.request('POST', '/v1/webhooks', { body: { url: ok.url } });
    const downHook = await s.request('POST', '/v1/webhooks', { body: { url: down.url } });
    await s.request('POST', '/v1/products', { body: productBody({ name: 'Old' }) });
    await ok.waitFor(1);
    await down.waitFor(1);
    const log = (id: string) =>
      s.request('GET', `/v1/webhooks/${id}/deliveries`).then((r) => r.body.deliveries as any[]);
    const [old] = await waitUntil('the old delivery to settle', async () => {
      const l = await log(okHook.body.id);
      return l[0]?.status === 'succeeded' ? l : undefined;
    });
    // Its failure recorded before the jump: recorded after, it would find the endpoint
    // failing for 31 days and disable it, and the new event would not be queued for it.
    await waitUntil('the failed attempt to be recorded', async () => {
      const l = await log(downHook.body.id);
      return l[0]?.attempts === 1 ? l : undefined;
    });

    now += 31 * DAY;
    await s.request('POST', '/v1/products', { body: productBody({ name: 'New' }) });
    await ok.waitFor(2);
    const remaining = await waitUntil('the old delivery to be purged', async () => {
      const l = await log(okHook.body.id);
      return l.length === 1 && l[0].status === 'succeeded' ? l : undefined;
    });
    t.not(remaining[0].id, old.id, 'only the new delivery is left');
    const attempts = await s.server.store.db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.seq', 'webhook_attempts.delivery_seq')
      .select('webhook_deliveries.id')
      .execute();
    t.notOk(
      attempts.some((a) => a.id === old.id),
      'its attempts went with it',
    );
    const pending = await log(downHook.body.id);
    t.equal(pending.length, 2, 'a pending delivery is never purged, however old');
    t.same(
      pending.map((d) => d.status),
      ['pending', 'pending'],
    );
  },
);
