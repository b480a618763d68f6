/**
 * The one switch between the test stores: AGENTSHELF_TEST_STORE=postgres makes every helper
 * that opens a store (startTestServer, openTestPipeline, the CLI environments) use a fresh
 * PostgreSQL database instead of the SQLite file in the test's directory. Unset (or
 * `sqlite`), nothing changes.
 *
 * On PostgreSQL, each test directory gets its own database, a `CREATE DATABASE ... TEMPLATE`
 * copy of a migrated template (tens of milliseconds), kept for that directory so a restart over
 * the same directory finds the same store. The PostgreSQL pass of run-tests.ts starts one
 * cluster with that template for all its test processes (startSharedPgCluster), named in
 * AGENTSHELF_TEST_PG_CLUSTER; each process drops the databases it made when its tests end. A
 * test file run on its own starts a cluster of its own (test/support/postgres.ts) and migrates
 * the template once. A test that stops or restarts PostgreSQL starts its own cluster.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Test } from 'tap';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { openStore, openStoreAt } from '../../src/db/store.js';
import { withTransaction } from '../../src/db/transaction.js';
import { attachPgCluster, startPgCluster, type PgCluster, type PgShared } from './postgres.js';

export type TestStoreKind = 'sqlite' | 'postgres';

export const TEST_STORE: TestStoreKind =
  process.env.AGENTSHELF_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

export function onPostgres(): boolean {
  return TEST_STORE === 'postgres';
}

let cluster: Promise<PgCluster> | undefined;
let template: Promise<void> | undefined;
const TEMPLATE = 'agentshelf_template';
const databases = new Map<string, Promise<string>>();
/** The databases this process made on the shared cluster, dropped when its tests end. */
const made: string[] = [];
let dropping = false;
let created = 0;
/** Apart from the names of earlier processes with the same pid on the shared cluster. */
const PROCESS_TAG = `${process.pid}_${randomBytes(3).toString('hex')}`;

/** The cluster run-tests.ts started for the whole pass, if any. */
const SHARED = process.env.AGENTSHELF_TEST_PG_CLUSTER
  ? (JSON.parse(process.env.AGENTSHELF_TEST_PG_CLUSTER) as PgShared)
  : undefined;

/** This process's cluster: the pass's shared one, or one of its own started on first use. */
export function testCluster(): Promise<PgCluster> {
  cluster ??= SHARED ? Promise.resolve(attachPgCluster(SHARED)) : startPgCluster();
  return cluster;
}

async function createTemplate(c: PgCluster): Promise<void> {
  await c.admin(`create database ${TEMPLATE}`);
  const store = openStoreAt({ dialect: 'postgres', url: c.url(TEMPLATE) });
  try {
    await migrateToLatest(store.db);
  } finally {
    await store.close();
  }
}

async function migratedTemplate(c: PgCluster): Promise<void> {
  template ??= SHARED ? Promise.resolve() : createTemplate(c);
  return template;
}

/**
 * The cluster of a PostgreSQL pass: started with the migrated template, shared by every test
 * process of the pass (AGENTSHELF_TEST_PG_CLUSTER) instead of each starting its own. Two files
 * at a time, each with servers, children and pools of their own: 500 connections.
 */
export async function startSharedPgCluster(): Promise<{ shared: PgShared; destroy: () => void }> {
  const c = await startPgCluster({ maxConnections: 500 });
  try {
    await createTemplate(c);
  } catch (err) {
    c.destroy();
    throw err;
  }
  const { host, port, user, password, dir } = c;
  return { shared: { host, port, user, password, dir }, destroy: c.destroy };
}

/**
 * A new database's name; on the shared cluster, to be dropped when this process's tests end
 * (tap's root teardown, after every test's own: their servers have stopped). tap is imported
 * here, not above: run-tests.ts imports this module too and is no test.
 */
async function databaseName(): Promise<string> {
  const name = `test_${PROCESS_TAG}_${++created}`;
  if (SHARED) {
    if (!dropping) {
      dropping = true;
      (await import('tap')).default.teardown(dropMadeDatabases);
    }
    made.push(name);
  }
  return name;
}

/** Drops this process's databases on the shared cluster (its own cluster goes whole). */
async function dropMadeDatabases(): Promise<void> {
  const c = await testCluster();
  for (const name of made.splice(0)) await c.admin(`drop database if exists ${name} with (force)`);
}

/** A fresh, migrated, empty database; its DATABASE_URL. */
export async function freshDatabaseUrl(options: Record<string, string> = {}): Promise<string> {
  const c = await testCluster();
  await migratedTemplate(c);
  const name = await databaseName();
  await c.admin(`create database ${name} template ${TEMPLATE}`);
  return c.url(name, options);
}

/** A fresh, empty (not migrated) database; its DATABASE_URL. For tests of `migrate` itself. */
export async function emptyDatabaseUrl(): Promise<string> {
  const c = await testCluster();
  const name = await databaseName();
  await c.admin(`create database ${name}`);
  return c.url(name);
}

/**
 * What a test's environment needs for its store: `{}` on SQLite (the file in DATA_DIR),
 * `{ DATABASE_URL }` on PostgreSQL. `fresh` (a new t.testdir(), which tap empties) gives a new
 * database; otherwise the one last given for this directory (a restart over the same store).
 */
export async function testStoreEnv(
  dir: string,
  options: { fresh: boolean } = { fresh: true },
): Promise<Record<string, string>> {
  if (!onPostgres()) return {};
  let url = options.fresh ? undefined : databases.get(dir);
  if (!url) {
    url = freshDatabaseUrl();
    databases.set(dir, url);
  }
  return { DATABASE_URL: await url };
}

/** Skips a test (or a whole file's) that is about SQLite's file, on PostgreSQL. */
export function skipOnPostgres(t: Test, reason: string): boolean {
  if (!onPostgres()) return false;
  t.comment(`skipped on PostgreSQL: ${reason}`);
  t.pass(`skipped on PostgreSQL: ${reason}`);
  return true;
}

/**
 * What openStore needs for a test's own store: the SQLite file given, or (on PostgreSQL) a
 * fresh database's DATABASE_URL beside it.
 */
export async function testStoreConfig(
  file: string,
): Promise<{ DATABASE_FILE: string; DATABASE_URL?: string }> {
  return onPostgres()
    ? { DATABASE_FILE: file, DATABASE_URL: await freshDatabaseUrl() }
    : { DATABASE_FILE: file };
}

/**
 * PostgreSQL: another connection's transaction on `url` that runs `work`, then holds what it
 * wrote and locked (past the store's statement timeout) until `release()`, which lets it
 * commit and resolves with work's result. Resolved once `work` has run; `db` is that other
 * connection's store, for reading pg_locks beside it.
 */
export async function holdTransaction<T>(
  t: Test,
  url: string,
  work: (trx: Transaction<Database>) => Promise<T>,
) {
  const store = openStore({ DATABASE_FILE: '/nonexistent', DATABASE_URL: url });
  t.teardown(() => store.close());
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holds = new Promise<void>((resolve) => (held = resolve));
  const holding = withTransaction(store.db, async (trx) => {
    await sql`set local statement_timeout = 0`.execute(trx);
    const result = await work(trx);
    held();
    await released;
    return result;
  });
  await Promise.race([holds, holding]);
  return {
    db: store.db,
    release: (): Promise<T> => {
      release();
      return holding;
    },
  };
}
