/**
 * The PostgreSQL store itself, on a real cluster (test/support/postgres.ts): DATABASE_URL and
 * its options, exact numbers, streaming, migrations that fail as a whole, key revocations seen
 * by another process's cache, and what `serve` and `migrate` do when PostgreSQL is away.
 * Runs in the PostgreSQL pass of `make test` (AGENTSHELF_TEST_STORE=postgres).
 */
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import t from 'tap';
import { loadConfig } from '../../../src/config.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { migrations } from '../../../src/db/migrations/index.js';
import { postgresSettings } from '../../../src/db/postgres/settings.js';
import { parseInt8, parseNumeric } from '../../../src/db/postgres/types.js';
import { describeLocation, openStore, openStoreAt, type Store } from '../../../src/db/store.js';
import { createApiKey } from '../../../src/domain/access/api-keys.js';
import { startServe } from '../../support/cli.js';
import { startPgCluster } from '../../support/postgres.js';
import { startTestServer } from '../../support/server.js';
import {
  emptyDatabaseUrl,
  freshDatabaseUrl,
  onPostgres,
  testCluster,
} from '../../support/store.js';

const MAIN = path.resolve(import.meta.dirname, '../../../src/main.js');

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else {
  await tests();
}

async function openFresh(options: Record<string, string> = {}): Promise<Store> {
  const store = openStore({
    DATABASE_FILE: '/nonexistent',
    DATABASE_URL: await freshDatabaseUrl(options),
  });
  t.teardown(() => store.close());
  return store;
}

/** Polls `check` until it holds, failing after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out (${ms} ms) waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function tests(): Promise<void> {
  t.test('DATABASE_URL: options, errors that name the option, no password shown', async (t) => {
    const s = postgresSettings(
      'postgres://shop%40x:p%2Fss@db.example.com:6543/my%20db?pool_size=7&statement_timeout=1500&sslmode=require&connect_timeout=3',
    );
    t.match(s.pool, {
      host: 'db.example.com',
      port: 6543,
      user: 'shop@x',
      password: 'p/ss',
      database: 'my db',
      max: 7,
      statement_timeout: 1500,
      connectionTimeoutMillis: 3000,
      ssl: { rejectUnauthorized: false },
    });
    t.equal(s.address, 'db.example.com:6543');
    t.equal(s.display, 'postgres://shop%40x@db.example.com:6543/my%20db');
    t.match(postgresSettings('postgresql://h/d?sslmode=verify-full').pool.ssl, {
      rejectUnauthorized: true,
    });
    t.equal(postgresSettings('postgres://h/d').pool.ssl, false, 'sslmode=disable by default');
    t.equal(postgresSettings('postgres://h/d').pool.max, 10);
    t.equal(postgresSettings('postgres://h/d').pool.statement_timeout, 30_000);
    for (const [url, message] of [
      ['postgres://u:hunter2@h/d?pool_size=0', /pool_size must be a whole number/],
      ['postgres://u:hunter2@h/d?statement_timeout=soon', /statement_timeout must be/],
      ['postgres://u:hunter2@h/d?sslmode=prefer', /sslmode must be one of/],
      ['postgres://u:hunter2@h/d?poolsize=3', /unknown option "poolsize"/],
      ['postgres://u:hunter2@h/', /database name/],
    ] as const) {
      const err = t.throws(() => postgresSettings(url), message) as Error;
      t.notMatch(err.message, /hunter2/, 'no password in the message');
    }
    t.equal(
      describeLocation({ dialect: 'postgres', url: 'postgres://u:hunter2@h:5/d?pool_size=2' }),
      'postgres://u@h:5/d',
    );
  });

  t.test('pool_size and statement_timeout reach the connections', async (t) => {
    const store = await openFresh({ pool_size: '3', statement_timeout: '200' });
    const shown = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(
      store.db,
    );
    t.equal(shown.rows[0]!.statement_timeout, '200ms');
    await t.rejects(sql`select pg_sleep(2)`.execute(store.db), /statement timeout/);
    // Six sleeps on three connections take two rounds.
    const started = Date.now();
    await Promise.all(Array.from({ length: 6 }, () => sql`select pg_sleep(0.1)`.execute(store.db)));
    t.ok(Date.now() - started >= 190, 'six statements waited for three connections');
  });

  t.test('int8 and numeric come back as numbers when exact, else BigInt or text', async (t) => {
    t.equal(parseInt8('42'), 42);
    t.equal(parseInt8('-9007199254740991'), -9007199254740991);
    t.equal(parseInt8('9007199254740993'), 9007199254740993n);
    t.equal(parseNumeric('12.50'), 12.5);
    t.equal(parseNumeric('-0.000'), 0);
    t.equal(parseNumeric('100'), 100);
    t.equal(parseNumeric('123456789012345678901234567890'), 123456789012345678901234567890n);
    t.equal(parseNumeric('0.1000000000000000000001'), '0.1000000000000000000001');
    t.equal(parseNumeric('NaN'), 'NaN');
    const store = await openFresh();
    const row = (
      await sql<Record<string, unknown>>`select 7::int8 as small, 9007199254740993::int8 as big,
        count(*) as n, sum(x) as total, 1.25::numeric as exact,
        12345678901234567890.5::numeric as wide
        from (values (9007199254740991::int8), (2::int8)) v(x)`.execute(store.db)
    ).rows[0]!;
    t.same(row, {
      small: 7,
      big: 9007199254740993n,
      n: 2,
      total: 9007199254740993n,
      exact: 1.25,
      wide: '12345678901234567890.5',
    });
  });

  t.test('queries run as named prepared statements, planned once per connection', async (t) => {
    const store = await openFresh({ pool_size: '1' });
    const byId = (id: string) =>
      store.db.selectFrom('products').select('id').where('id', '=', id).execute();
    await byId('a');
    await byId('b');
    const prepared = await sql<{ name: string; statement: string }>`select name, statement
      from pg_prepared_statements where statement like 'select "id" from "products"%'`.execute(
      store.db,
    );
    t.equal(prepared.rows.length, 1, 'one statement for both reads');
    t.match(prepared.rows[0]!.name, /^agentshelf_\d+$/);
  });

  t.test('a reader streams through a cursor, read-only, beside the main pool', async (t) => {
    const store = await openFresh({ pool_size: '1' });
    const reader = store.openReader();
    t.teardown(() => reader.destroy());
    let seen = 0;
    const rows = sql<{ i: number }>`(select generate_series(1, 5000)::int8 as i)`;
    for await (const row of (reader as Kysely<any>)
      .selectFrom(rows.as('s'))
      .select('i')
      .stream(100)) {
      seen++;
      if (row.i % 1000 === 0) {
        // The main pool (one connection) is free while the reader streams.
        await sql`select 1`.execute(store.db);
      }
    }
    t.equal(seen, 5000);
    await t.rejects(
      reader
        .insertInto('discovery_brands')
        .values({ name: 'x', slug: 'x', created_at: 'x' })
        .execute(),
      /read-only transaction/,
    );
    // A reader's transaction is one snapshot (the pipeline reads a feed's pages in one).
    const count = async (db: Kysely<any>) =>
      Number(
        (
          await db
            .selectFrom('discovery_brands')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await reader.transaction().execute(async (snapshot) => {
      t.equal(await count(snapshot), 0);
      await store.db
        .insertInto('discovery_brands')
        .values({ name: 'y', slug: 'y', created_at: 'y' })
        .execute();
      t.equal(await count(snapshot), 0, 'a commit after the snapshot is not seen in it');
    });
    t.equal(await count(reader), 1, 'and is seen after');
  });

  t.test('a migration that fails half-way leaves the schema as it was', async (t) => {
    const store = openStoreAt({ dialect: 'postgres', url: await emptyDatabaseUrl() });
    t.teardown(() => store.close());
    const broken = {
      ...migrations,
      '20991231000000_broken': {
        up: async (db: Kysely<unknown>) => {
          await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
          await sql`select no_such_function()`.execute(db);
        },
      },
    };
    await t.rejects(
      migrateToLatest(store.db, { migrations: broken }),
      /20991231000000_broken failed/,
    );
    const tables = await sql<{
      table_name: string;
    }>`select table_name from information_schema.tables
      where table_schema = 'public' order by table_name`.execute(store.db);
    t.same(
      tables.rows.map((r) => r.table_name),
      ['kysely_migration', 'kysely_migration_lock'],
      "only the Migrator's own tables: every migration of the run rolled back",
    );
    const applied = await migrateToLatest(store.db);
    t.equal(applied.length, Object.keys(migrations).length, 'then every migration applies');
    const columns = await sql<{
      data_type: string;
      is_identity: string;
    }>`select data_type, is_identity
      from information_schema.columns where table_name = 'events' and column_name = 'seq'`.execute(
      store.db,
    );
    t.same(
      columns.rows,
      [{ data_type: 'bigint', is_identity: 'YES' }],
      'integer keys are bigint identities',
    );
  });

  t.test('a key revoked in one process is refused by the other, which had it cached', async (t) => {
    const a = await startTestServer(t);
    const b = await startTestServer(t, { DATABASE_URL: a.config.DATABASE_URL! });
    const key = await a.createKey('read_only');
    // b caches the key once its LISTEN connection is up (externalChanges holds still).
    await until('b listening', 60_000, async () => {
      const v = b.server.store.externalChanges();
      await new Promise((resolve) => setTimeout(resolve, 5));
      return b.server.store.externalChanges() === v;
    });
    t.equal((await b.request('GET', '/v1/products', { key: key.secret })).status, 200);
    t.equal((await b.request('GET', '/v1/products', { key: key.secret })).status, 200);
    t.equal((await a.request('DELETE', `/v1/api-keys/${key.id}`)).status, 200);
    // b's cache has no expiry: only the NOTIFY can make it read the key again. How fast that
    // is belongs to a benchmark; here it must happen (a NOTIFY arrives in milliseconds, the
    // deadline is for a busy machine).
    await until('b refusing the key', 60_000, async () => {
      return (await b.request('GET', '/v1/products', { key: key.secret })).status === 401;
    });
    t.pass('refused by the other process');
  });

  t.test('PostgreSQL unreachable at start: one line naming host:port, exit 1', async (t) => {
    const port = await closedPort();
    const url = `postgres://shop:hunter2secret@127.0.0.1:${port}/shop?connect_timeout=2`;
    for (const verb of ['migrate', 'serve']) {
      const r = spawnSync(process.execPath, [MAIN, verb], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: url,
          DATA_DIR: t.testdir({}),
          PORT: '0',
          FEEDS_PORT: '0',
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
      t.equal(r.status, 1, `${verb} exits 1`);
      t.equal(
        r.stderr.trim(),
        `agentshelf ${verb}: cannot reach PostgreSQL at 127.0.0.1:${port}: unreachable (ECONNREFUSED); is it running, and is DATABASE_URL right?`,
      );
      t.notMatch(r.stdout + r.stderr, /hunter2secret/);
    }
    const c = await testCluster();
    const wrong = `postgres://${c.user}:hunter2secret@${c.host}:${c.port}/postgres`;
    const r = spawnSync(process.execPath, [MAIN, 'migrate'], {
      env: { PATH: process.env.PATH, DATABASE_URL: wrong },
      encoding: 'utf8',
    });
    t.equal(r.status, 1);
    t.equal(
      r.stderr.trim(),
      `agentshelf migrate: cannot open the PostgreSQL store at ${c.host}:${c.port}: the password was refused`,
    );
  });

  t.test('PostgreSQL restarted while serving: 503 with Retry-After, then recovery', async (t) => {
    // A cluster of its own: this one is stopped and started.
    const c = await startPgCluster();
    t.teardown(() => c.destroy());
    await c.admin('create database shop');
    const url = c.url('shop');
    const serve = await startServe({
      DATABASE_URL: url,
      DATA_DIR: t.testdir({}),
      AUDIT_LOG: 'off',
    });
    t.teardown(() => serve.child.kill('SIGKILL'));
    const store = openStoreAt({ dialect: 'postgres', url });
    const { secret } = await createApiKey(
      store.db,
      { level: 'admin', rpm: 1_000_000, burst: 1_000_000, monthly: 1_000_000_000 },
      { environment: loadConfig({}).ENVIRONMENT, defaultPlan: 'free' },
    );
    await store.close();
    const get = async (headers: Record<string, string> = {}) => {
      const res = await fetch(`${serve.url}/v1/products?limit=5`, {
        headers: { authorization: `Bearer ${secret}`, ...headers },
      });
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        text: await res.text(),
      };
    };
    t.equal((await get()).status, 200);

    // Traffic all along: none of it may crash the process.
    let stop = false;
    const statuses = new Set<number>();
    const traffic = (async () => {
      while (!stop) statuses.add((await get()).status);
    })();

    c.stop();
    const plain = await get();
    t.equal(plain.status, 503);
    t.equal(plain.retryAfter, '2');
    t.equal(JSON.parse(plain.text).error.code, 'service_unavailable');
    const envelope = await get({ prefer: 'envelope' });
    t.equal(envelope.status, 503);
    t.equal(envelope.retryAfter, '2');
    t.equal(JSON.parse(envelope.text).error.code, 'SERVICE_UNAVAILABLE');
    t.notMatch(plain.text + envelope.text, new RegExp(c.password), 'no password in error bodies');

    c.start();
    await until('recovery', 60_000, async () => (await get()).status === 200);
    stop = true;
    await traffic;
    t.same(
      [...statuses].filter((s) => s !== 200 && s !== 503),
      [],
      'only 200 and 503 answered',
    );
    t.equal(serve.child.exitCode, null, 'serve still running');
    t.notMatch(serve.stdout(), new RegExp(c.password), 'no password in the logs');
    t.match(serve.stdout(), /store unavailable/, 'the outage is logged');
  });
}
