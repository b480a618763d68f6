/**
 * The outbox fan-out on PostgreSQL behind a long writer: it needs every transaction that
 * inserted an event to end (LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE), and writers that
 * come while it waits queue behind its request. Behind a long writer (a sync's apply holds
 * the outbox to its commit) it gives up after a short wait and reports the outbox busy, so
 * API writes go on; once the writer commits, the next fan-out queues every event, in order.
 * Runs in the PostgreSQL pass of `make test`.
 */
import t from 'tap';
import { openStore } from '../../../src/db/store.js';
import { recordEvent } from '../../../src/domain/events.js';
import { fanOutEvents } from '../../../src/domain/webhooks/outbox.js';
import { createWebhook } from '../../../src/domain/webhooks/webhooks.js';
import { freshDatabaseUrl, holdTransaction, onPostgres } from '../../support/store.js';

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else {
  t.test('a fan-out behind a long writer gives up, and writers go on meanwhile', async (t) => {
    const url = await freshDatabaseUrl();
    const store = openStore({ DATABASE_FILE: '/nonexistent', DATABASE_URL: url });
    t.teardown(() => store.close());
    const { webhook } = await createWebhook(
      store.db,
      { url: 'http://127.0.0.1:9/hook' },
      { allowPrivate: true },
    );
    const first = await recordEvent(store.db, 'product.created', { id: 'prod_first' });

    // A long writer: an event inserted, not yet committed.
    const writer = await holdTransaction(t, url, (trx) =>
      recordEvent(trx, 'product.updated', { id: 'prod_long' }),
    );

    t.equal(
      await fanOutEvents(store.db, 100, new Date()),
      null,
      'the fan-out reports the outbox busy',
    );
    const during = await recordEvent(store.db, 'product.created', { id: 'prod_during' });
    const seqOf = async (id: string) =>
      Number(
        (
          await store.db
            .selectFrom('events')
            .select('seq')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).seq,
      );
    t.ok(
      (await seqOf(during.id)) > (await seqOf(first.id)),
      'an event written while the long writer is in flight commits',
    );

    const long_ = await writer.release();
    const fanned = await fanOutEvents(store.db, 100, new Date());
    t.ok(fanned, 'with the writer committed, the fan-out runs');
    const seqs = [await seqOf(first.id), await seqOf(long_.id), await seqOf(during.id)];
    t.equal(
      Number(fanned!.webhooks[0]!.event_cursor),
      Math.max(...seqs),
      'the cursor past every event',
    );
    const queued = await store.db
      .selectFrom('webhook_deliveries')
      .select('event_seq')
      .where('webhook_id', '=', webhook.id)
      .orderBy('event_seq')
      .execute();
    t.same(
      queued.map((d) => Number(d.event_seq)),
      seqs.sort((a, b) => a - b),
      "each event queued once, the long writer's too",
    );
  });
}
