/**
 * A sync's apply on PostgreSQL waits for the catalogue lock another sync's apply (or any bulk
 * write) holds to its commit: that wait is bounded by the run's own deadline
 * (`settings.timeout_s`), not by the store's statement timeout, which bounds one request's
 * query. Before, two syncs at once failed the second with "canceling statement due to
 * statement timeout" when the first's apply took longer than 30 s. Runs in the PostgreSQL
 * pass of `make test`.
 */
import { sql } from 'kysely';
import t from 'tap';
import { openStore } from '../../../src/db/store.js';
import { startFeedServer } from '../../support/feed-server.js';
import { feedProduct, jsonl } from '../../support/integrations.js';
import { waitUntil } from '../../support/receiver.js';
import { startTestServer } from '../../support/server.js';
import { freshDatabaseUrl, onPostgres } from '../../support/store.js';

/** The store's statement timeout in this test (ms): the lock is held well past it. */
const STATEMENT_TIMEOUT_MS = 300;

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else {
  t.test(
    "a sync waits past the statement timeout for another transaction's catalogue lock, then applies",
    async (t) => {
      const url = await freshDatabaseUrl({ statement_timeout: String(STATEMENT_TIMEOUT_MS) });
      const feeds = await startFeedServer(t);
      feeds.set('/a.jsonl', jsonl([feedProduct('A'), feedProduct('B')]));
      const server = await startTestServer(t, {
        ALLOW_PRIVATE_TARGETS: 'true',
        DATABASE_URL: url,
      });
      const created = await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/a.jsonl') } },
      });
      t.equal(created.status, 201);
      const id = created.body.id as string;

      // Another writer of the whole catalogue (a bulk write, another sync's apply) holds the
      // lock in a transaction of its own.
      const other = openStore({ DATABASE_FILE: '/nonexistent', DATABASE_URL: url });
      t.teardown(() => other.close());
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const holding = other.db.transaction().execute(async (trx) => {
        await sql`set local statement_timeout = 0`.execute(trx);
        await sql`lock table products in share row exclusive mode`.execute(trx);
        await released;
      });

      const started = await server.request('POST', `/v1/integrations/${id}/sync`);
      t.equal(started.status, 202, 'the sync starts');
      // Its apply waits on the lock: seen in pg_locks, not guessed from a sleep.
      await waitUntil(
        'the apply to wait for the catalogue lock',
        async () => {
          const { rows } = await sql<{ n: string }>`select count(*) as n from pg_locks l
            join pg_class c on c.oid = l.relation
            where c.relname = 'products' and not l.granted`.execute(other.db);
          return Number(rows[0]!.n) > 0;
        },
        30_000,
      );
      // Held three times the statement timeout: a wait bounded by it would be cancelled.
      await new Promise((resolve) => setTimeout(resolve, STATEMENT_TIMEOUT_MS * 3));
      release();
      await holding;

      // Still running (the wait held), or ended already (it failed): the run as recorded.
      await server.server.deps.integrations!.settled(started.body.id as string);
      const run = (await server.request('GET', `/v1/integrations/${id}/sync/status`)).body.last;
      t.match(
        run,
        { status: 'succeeded', created: 2 },
        `the sync applied, both products created (${JSON.stringify(run)})`,
      );
    },
  );
}
