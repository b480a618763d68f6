/**
 * A sync's apply on PostgreSQL waits for the catalogue lock a bulk write holds to its commit,
 * and for another apply of the same integration (not of another one): that wait is bounded by
 * the run's own deadline
 * (`settings.timeout_s`), not by the store's statement timeout, which bounds one request's
 * query. Before, two syncs at once failed the second with "canceling statement due to
 * statement timeout" when the first's apply took longer than 30 s. Runs in the PostgreSQL
 * pass of `make test`.
 */
import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { openStore } from '../../../src/db/store.js';
import { startFeedServer } from '../../support/feed-server.js';
import { feedProduct, jsonl } from '../../support/integrations.js';
import { waitUntil } from '../../support/receiver.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { freshDatabaseUrl, holdTransaction, onPostgres } from '../../support/store.js';

/** The store's statement timeout in this test (ms): the lock is held well past it. */
const STATEMENT_TIMEOUT_MS = 300;

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else {
  t.test(
    "a sync waits past the statement timeout for another transaction's catalogue lock, then applies",
    async (t) => {
      const { url, server, id } = await feedIntegration(t, {});
      // Held three times the statement timeout: a wait bounded by it would be cancelled.
      const run = await syncWhileLocked(t, server, url, id, STATEMENT_TIMEOUT_MS * 3);
      t.match(
        run,
        { status: 'succeeded', created: 2 },
        `the sync applied, both products created (${JSON.stringify(run)})`,
      );
    },
  );

  t.test(
    'a sync still waiting for the lock at its deadline fails with the deadline, having applied nothing',
    async (t) => {
      const { url, server, id } = await feedIntegration(t, { timeout_s: 1 });
      const run = await syncWhileLocked(t, server, url, id, 3_000);
      t.match(run, {
        status: 'failed',
        created: 0,
        error:
          'the sync ran past its time limit of 1 s (settings.timeout_s) and was stopped; nothing was applied',
      });
      const store = openStore({ DATABASE_FILE: '/nonexistent', DATABASE_URL: url });
      t.teardown(() => store.close());
      const products = await sql<{ n: string }>`select count(*) as n from products`.execute(
        store.db,
      );
      t.equal(Number(products.rows[0]!.n), 0, 'no product written');
    },
  );

  t.test(
    "an integration's apply does not wait for another integration's apply; one of the same integration does",
    async (t) => {
      const { url, server, feeds, id: first } = await feedIntegration(t, {});
      feeds.set('/b.jsonl', jsonl([feedProduct('C'), feedProduct('D')]));
      const created = await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/b.jsonl') } },
      });
      t.equal(created.status, 201);
      const second = created.body.id as string;
      // Another transaction holds what the first integration's apply holds to its commit.
      const other = await holdTransaction(t, url, async (trx) => {
        await sql`lock table products in row exclusive mode`.execute(trx);
        await sql`select id from integrations where id = ${first} for no key update`.execute(trx);
      });
      const run = async (id: string) => {
        const started = await server.request('POST', `/v1/integrations/${id}/sync`);
        t.equal(started.status, 202, `the sync of ${id} starts (a start does not wait)`);
        await server.server.deps.integrations!.settled(started.body.id as string);
        return (await server.request('GET', `/v1/integrations/${id}/sync/status`)).body.last;
      };
      t.match(
        await run(second),
        { status: 'succeeded', created: 2 },
        'the other integration applied while the first one was held',
      );
      const firstRun = run(first);
      await waitUntil(
        "the first integration's apply to wait for its row",
        async () => {
          const { rows } = await sql<{ n: string }>`select count(*) as n from pg_locks
            where not granted`.execute(other.db);
          return Number(rows[0]!.n) > 0;
        },
        30_000,
      );
      await other.release();
      t.match(await firstRun, { status: 'succeeded', created: 2 }, 'then it applied');
    },
  );

  t.test(
    'a run whose heartbeat is old but whose row its apply holds is alive: a start gets 409, the run is left running',
    async (t) => {
      const { url, server, id } = await feedIntegration(t, {});
      const store = openStore({ DATABASE_FILE: '/nonexistent', DATABASE_URL: url });
      t.teardown(() => store.close());
      // Another host's run, its last heartbeat two minutes old, its row held as its apply
      // holds it (to the commit, past the store's statement timeout).
      await store.db
        .insertInto('sync_runs')
        .values({
          id: 'sync_elsewhere',
          integration_id: id,
          status: 'running',
          trigger: 'manual',
          started_at: new Date().toISOString(),
          errors: '[]',
          owner: 'elsewhere',
          pid: 1,
          hostname: 'another-host.invalid',
          heartbeat_ms: Date.now() - 120_000,
        })
        .execute();
      const other = await holdTransaction(t, url, async (trx) => {
        await sql`select id from sync_runs where id = 'sync_elsewhere' for update`.execute(trx);
      });
      const started = await server.request('POST', `/v1/integrations/${id}/sync`);
      t.equal(started.status, 409, `the start is refused (${JSON.stringify(started.body)})`);
      t.match(started.body, { error: { code: 'conflict' } });
      await other.release();
      const run = await store.db
        .selectFrom('sync_runs')
        .select('status')
        .where('id', '=', 'sync_elsewhere')
        .executeTakeFirstOrThrow();
      t.equal(run.status, 'running', 'the run was not marked failed while its row was held');
    },
  );
}

/** A serve on a fresh database with a short statement timeout, and a feed integration of two products. */
async function feedIntegration(t: Test, settings: Record<string, unknown>) {
  const url = await freshDatabaseUrl({ statement_timeout: String(STATEMENT_TIMEOUT_MS) });
  const feeds = await startFeedServer(t);
  feeds.set('/a.jsonl', jsonl([feedProduct('A'), feedProduct('B')]));
  const server = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true', DATABASE_URL: url });
  const created = await server.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: feeds.url('/a.jsonl'), ...settings } },
  });
  t.equal(created.status, 201);
  return { url, server, feeds, id: created.body.id as string };
}

/**
 * Starts a sync while another transaction (a bulk write) holds the
 * catalogue lock; releases it `holdMs` after the sync's apply is seen waiting for it (in
 * pg_locks, not guessed from a sleep); the run as recorded once it ended.
 */
async function syncWhileLocked(
  t: Test,
  server: TestServer,
  url: string,
  id: string,
  holdMs: number,
) {
  const other = await holdTransaction(t, url, async (trx) => {
    await sql`lock table products in share row exclusive mode`.execute(trx);
  });
  const started = await server.request('POST', `/v1/integrations/${id}/sync`);
  t.equal(started.status, 202, 'the sync starts');
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
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  await other.release();
  // Still running (the wait held), or ended already (it failed): the run as recorded.
  await server.server.deps.integrations!.settled(started.body.id as string);
  return (await server.request('GET', `/v1/integrations/${id}/sync/status`)).body.last;
}
