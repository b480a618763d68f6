/**
 * agentshelf behind PgBouncer in transaction pooling mode (issue 25): Debian's `pgbouncer`,
 * started here in front of the test's cluster, with no `ignore_startup_parameters` (so any
 * startup parameter it does not track is refused) and two server connections for the
 * database (so clients share server sessions, and a named prepared statement or a session
 * setting would go astray). `serve` runs with DATABASE_URL through it and DATABASE_DIRECT_URL
 * to PostgreSQL: API writes, a webhook delivery, and a key revoked by another process, which
 * reaches the server's key cache through its LISTEN connection, on the direct URL. Without
 * DATABASE_DIRECT_URL, `migrate` refuses to start with one line saying what to set.
 * Runs in the PostgreSQL pass of `make test` (AGENTSHELF_TEST_STORE=postgres).
 */
import path from 'node:path';
import t from 'tap';
import { pgbouncerMissing, startPgBouncer } from '../../support/pgbouncer.js';
import { runCli, runCliAsync } from '../../support/cli.js';
import { startReceiver, waitUntil } from '../../support/receiver.js';
import { productBody } from '../../support/server.js';
import { serveShared, type SharedStore } from '../../support/several.js';
import { freshDatabaseUrl, onPostgres, testCluster } from '../../support/store.js';
import pg from 'pg';

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else if (pgbouncerMissing()) {
  t.pass(`skipped: ${pgbouncerMissing()}`);
} else {
  await tests();
}

/** The database a URL names. */
const databaseOf = (url: string) => new URL(url).pathname.slice(1);

/** Runs one query on a database, directly, and closes. */
async function query<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as R[];
  } finally {
    await client.end();
  }
}

async function tests(): Promise<void> {
  t.test(
    'serve through PgBouncer (transaction mode), sessions on DATABASE_DIRECT_URL',
    async (t) => {
      const cluster = await testCluster();
      const bouncer = await startPgBouncer(t, cluster, { poolMode: 'transaction', poolSize: 2 });
      const direct = await freshDatabaseUrl();
      const database = databaseOf(direct);
      const dir = t.testdir({});
      const env = {
        DATA_DIR: dir,
        PUBLIC_DIR: path.join(dir, 'public'),
        DATABASE_URL: bouncer.url(database, { pool_size: '6' }),
        DATABASE_DIRECT_URL: direct,
        ALLOW_PRIVATE_TARGETS: 'true',
        FEEDS_DEBOUNCE_MS: '3600000',
        FEEDS_CRON: '0 0 1 1 *',
      };
      const made = runCli(['keys', 'create', '--level', 'admin', '--name', 'admin'], env);
      t.equal(made.status, 0, `keys create through PgBouncer: ${made.stderr}`);
      const reader = runCli(['keys', 'create', '--level', 'read_only', '--json'], env);
      const readKey = JSON.parse(reader.stdout) as { key: string; id: string };
      const shared: SharedStore = {
        dir,
        env,
        location: { dialect: 'postgres', url: env.DATABASE_URL, directUrl: direct },
        adminKey: made.stdout.trim(),
      };
      const receiver = await startReceiver(t);
      const served = await serveShared(t, shared);
      const call = async (method: string, p: string, body?: unknown, key = shared.adminKey) => {
        const res = await fetch(served.url + p, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
      };

      const hook = await call('POST', '/v1/webhooks', {
        url: receiver.url,
        events: ['product.created', 'product.updated'],
      });
      t.equal(hook.status, 201, 'a webhook endpoint is registered');
      // Writes side by side: more clients than PgBouncer's two server connections.
      const created = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          call('POST', '/v1/products', productBody({ id: `pooled-${i}`, name: `Pooled ${i}` })),
        ),
      );
      t.same(
        created.map((c) => c.status),
        Array(12).fill(201),
        'twelve products created at once',
      );
      const updated = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          call('PUT', `/v1/products/pooled-${i}`, { name: `Renamed ${i}`, status: 'draft' }),
        ),
      );
      t.same(
        updated.map((u) => u.status),
        Array(6).fill(200),
        'six updated at once',
      );
      const page = await call('GET', '/v1/products?limit=50');
      t.equal(page.body.products?.length, 12, 'the list reads all twelve');

      // Every event is delivered, in event order.
      const events = await query<{ id: string }>(
        direct,
        `select id from events where type like 'product.%' order by seq`,
      );
      t.equal(events.length, 18, 'twelve creates and six updates in the outbox');
      await receiver.waitFor(events.length, 30_000);
      t.same(
        receiver.requests.map((r) => r.headers['webhook-id']),
        events.map((e) => e.id),
        'every event delivered once, in event order',
      );

      // The key-change listener: one backend LISTENs, and it is not one of PgBouncer's.
      const pooledPorts = new Set(
        (await bouncer.show('SHOW SERVERS')).map((s) => Number(s.local_port)),
      );
      const listening = await query<{ client_port: number }>(
        direct,
        `select client_port from pg_stat_activity where datname = $1 and query = 'listen agentshelf_key_changes'`,
        [database],
      );
      t.equal(listening.length, 1, 'one LISTEN connection');
      t.notOk(pooledPorts.has(listening[0]!.client_port), 'it is direct, not through PgBouncer');
      // A key cached by serve, revoked by another process: the NOTIFY reaches serve's LISTEN.
      t.equal((await call('GET', '/v1/products', undefined, readKey.key)).status, 200);
      t.equal((await call('GET', '/v1/products', undefined, readKey.key)).status, 200);
      const revoked = await runCliAsync(['keys', 'revoke', readKey.id], env);
      t.equal(revoked.status, 0, `keys revoke: ${revoked.stderr}`);
      await waitUntil(
        'the revocation to reach serve',
        async () => (await call('GET', '/v1/products', undefined, readKey.key)).status === 401,
      );
      t.pass('the revoked key is refused');

      // The pooled traffic went through PgBouncer, and nothing was refused.
      const stats = (await bouncer.show('SHOW STATS')).find((s) => s.database === database);
      t.ok(
        Number(stats?.total_xact_count) > 30,
        `PgBouncer ran ${stats?.total_xact_count} transactions`,
      );
      t.notMatch(bouncer.log(), /unsupported startup parameter/, 'no startup parameter refused');
    },
  );

  t.test('DATABASE_URL on PgBouncer without DATABASE_DIRECT_URL: a clear refusal', async (t) => {
    const cluster = await testCluster();
    const database = databaseOf(await freshDatabaseUrl());
    const dir = t.testdir({});
    const strict = await startPgBouncer(t, cluster, { poolMode: 'transaction', poolSize: 2 });
    const refused = runCli(['migrate'], { DATA_DIR: dir, DATABASE_URL: strict.url(database) });
    t.equal(refused.status, 1, 'exit 1');
    t.equal(
      refused.stderr.trim(),
      `agentshelf migrate: cannot open the PostgreSQL store at 127.0.0.1:${strict.port}: it is a connection pooler (PgBouncer), which refuses the session setting statement_timeout (unsupported startup parameter); agentshelf needs a session of its own for LISTEN/NOTIFY, migrations and its streaming readers: set DATABASE_DIRECT_URL to PostgreSQL itself (DATABASE_URL may stay on the pooler in transaction mode)`,
    );
    // A PgBouncer told to drop the parameters it does not track: they never arrive.
    const lax = await startPgBouncer(t, cluster, {
      poolMode: 'transaction',
      poolSize: 2,
      ignore: ['statement_timeout', 'options'],
    });
    const dropped = runCli(['migrate'], { DATA_DIR: dir, DATABASE_URL: lax.url(database) });
    t.equal(dropped.status, 1, 'exit 1');
    t.match(
      dropped.stderr.trim(),
      `agentshelf migrate: cannot open the PostgreSQL store at 127.0.0.1:${lax.port}: statement_timeout=30000 of DATABASE_URL did not reach the session (it has 0): DATABASE_URL leads to a pooler that drops startup parameters (PgBouncer's ignore_startup_parameters); agentshelf needs a session of its own`,
    );
    // statement_timeout is a startup parameter: refused by name when DATABASE_URL is pooled.
    const named = runCli(['migrate'], {
      DATA_DIR: dir,
      DATABASE_URL: strict.url(database, { statement_timeout: '5000' }),
      DATABASE_DIRECT_URL: cluster.url(database),
    });
    t.equal(named.status, 2, 'a configuration error');
    t.match(
      named.stderr,
      /DATABASE_URL: statement_timeout cannot be sent through a transaction pooler/,
    );
    t.notMatch(
      refused.stderr + dropped.stderr + named.stderr,
      cluster.password,
      'no password shown',
    );
  });
}
