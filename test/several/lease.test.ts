import t from 'tap';
import {
  claimDelivery,
  claimQueuedDelivery,
  type Lease,
} from '../../src/db/queries/webhook-deliveries.js';
import { withTransaction } from '../../src/db/transaction.js';
import { recordEvent } from '../../src/domain/events.js';
import { newId } from '../../src/ids.js';
import { startReceiver } from '../support/receiver.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const FAST = { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05' };
/** A worker on another host: only the lapse of its lease tells that it is gone. */
const ELSEWHERE = 'elsewhere.example/4242/abcdefghij';

/** Queues a delivery of a new event to an endpoint, leased to `owner` until `until`. */
async function queueLeased(s: TestServer, webhookId: string, owner: string, until: Date) {
  return withTransaction(s.server.store.db, async (trx) => {
    const event = await recordEvent(trx, 'product.updated', { id: 'leased' });
    const { seq } = await trx
      .selectFrom('events')
      .select('seq')
      .where('id', '=', event.id)
      .executeTakeFirstOrThrow();
    const delivery = await trx
      .insertInto('webhook_deliveries')
      .values({
        id: newId('dlv'),
        webhook_id: webhookId,
        event_seq: seq,
        event_id: event.id,
        event_type: event.type,
        payload: null,
        status: 'pending',
        attempts: 0,
        next_attempt_at: new Date().toISOString(),
        created_at: new Date().toISOString(),
        lease_owner: owner,
        lease_expires_at: until.toISOString(),
      })
      .returning('seq')
      .executeTakeFirstOrThrow();
    // The fan-out must not queue this event a second time.
    await trx
      .updateTable('webhooks')
      .set({ event_cursor: seq })
      .where('id', '=', webhookId)
      .execute();
    return { eventId: event.id, seq: delivery.seq };
  });
}

t.test(
  'a delivery leased by a worker on another host waits for the lease to lapse, then goes first',
  async (t) => {
    const s = await startTestServer(t, FAST);
    const receiver = await startReceiver(t);
    const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
    t.equal(hook.status, 201);
    const lapse = new Date(Date.now() + 1_500);
    const leased = await queueLeased(s, hook.body.id, ELSEWHERE, lapse);
    // A later event wakes the lane: the endpoint's head is leased elsewhere, so it waits.
    const product = await s.request('POST', '/v1/products', { body: productBody() });
    const [first, second] = await receiver.waitFor(2, 60_000);
    t.equal(first!.headers['webhook-id'], leased.eventId, 'the leased delivery goes first');
    t.ok(
      first!.at >= lapse.getTime(),
      `not before its lease lapsed (${first!.at - lapse.getTime()} ms after)`,
    );
    t.equal(JSON.parse(second!.body).data.id, product.body.id, 'then the one queued behind it');
  },
);

t.test(
  'claims: the head only, one holder at a time, a lapsed or dead holder replaced',
  async (t) => {
    const s = await startTestServer(t, { ...FAST, WEBHOOK_LEASE_MS: '60000' });
    // An endpoint no worker sends to: its receiver is a closed port, and it is disabled.
    const hook = await s.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/x' } });
    await s.request('PUT', `/v1/webhooks/${hook.body.id}`, { body: { status: 'disabled' } });
    const db = s.server.store.db;
    const now = new Date();
    const lease = (owner: string, gone?: string): Lease => ({
      owner,
      now: now.toISOString(),
      until: new Date(now.getTime() + 60_000).toISOString(),
      gone,
    });
    const one = await queueLeased(s, hook.body.id, ELSEWHERE, new Date(now.getTime() + 60_000));
    const two = await queueLeased(s, hook.body.id, 'nobody/1/x', new Date(0));
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('seq', '=', two.seq)
      .execute();

    t.notOk(await claimQueuedDelivery(db, hook.body.id, one.seq, lease('me')), 'held elsewhere');
    t.notOk(
      await claimQueuedDelivery(db, hook.body.id, two.seq, lease('me')),
      'not the head while an earlier delivery of its endpoint is pending',
    );
    t.notOk(await claimDelivery(db, one.seq, lease('me')), 'a manual retry is refused too');
    t.ok(
      await claimQueuedDelivery(db, hook.body.id, one.seq, lease('me', ELSEWHERE)),
      'taken at once from a holder known to be gone',
    );
    t.notOk(await claimQueuedDelivery(db, hook.body.id, one.seq, lease('you')), 'now mine');
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_expires_at: new Date(now.getTime() - 1).toISOString() })
      .where('seq', '=', one.seq)
      .execute();
    t.ok(
      await claimQueuedDelivery(db, hook.body.id, one.seq, lease('you')),
      'a lapsed lease is free',
    );
    const [row] = await db
      .selectFrom('webhook_deliveries')
      .select(['lease_owner'])
      .where('seq', '=', one.seq)
      .execute();
    t.equal(row!.lease_owner, 'you');
  },
);
