/**
 * The one switch between the test stores: AGENTSHELF_TEST_STORE=postgres makes every helper
 * that opens a store (startTestServer, openTestPipeline, the CLI environments) use a fresh
 * PostgreSQL database instead of the SQLite file in the test's directory. Unset (or
 * `sqlite`), nothing changes.
 *
 * On PostgreSQL, the first test of a process starts a cluster (test/support/postgres.ts) and
 * migrates a template database once; each test directory then gets its own
 * `CREATE DATABASE ... TEMPLATE` copy (a file copy: milliseconds), kept for that directory so
 * a restart over the same directory finds the same store.
 *
 * The PostgreSQL pass of run-tests.ts prepares that once for all its test processes
 * (makePgSeed): a stopped cluster with the migrated template, named in AGENTSHELF_TEST_PG_SEED;
 * each process then copies its data directory instead of running initdb and migrating.
 */
import path from 'node:path';
import type { Test } from 'tap';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openStoreAt } from '../../src/db/store.js';
import { startPgCluster, type PgCluster, type PgSeed } from './postgres.js';

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
let created = 0;

/** The seed run-tests.ts prepared (a cluster whose template is migrated), if any. */
const SEED = process.env.AGENTSHELF_TEST_PG_SEED
  ? (JSON.parse(process.env.AGENTSHELF_TEST_PG_SEED) as PgSeed)
  : undefined;

/** This process's cluster, started on first use. */
export function testCluster(): Promise<PgCluster> {
  cluster ??= startPgCluster({ seed: SEED });
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
  template ??= SEED ? Promise.resolve() : createTemplate(c);
  return template;
}

/**
 * A cluster with the migrated template, stopped, for the test processes of a PostgreSQL pass
 * to copy (AGENTSHELF_TEST_PG_SEED): each then skips initdb and the migrations. `destroy`
 * removes it (and it goes with this process in any case).
 */
export async function makePgSeed(): Promise<{ seed: PgSeed; destroy: () => void }> {
  const c = await startPgCluster();
  try {
    await createTemplate(c);
  } catch (err) {
    c.destroy();
    throw err;
  }
  c.stop();
  return { seed: { data: path.join(c.dir, 'data'), password: c.password }, destroy: c.destroy };
}

/** A fresh, migrated, empty database; its DATABASE_URL. */
export async function freshDatabaseUrl(options: Record<string, string> = {}): Promise<string> {
  const c = await testCluster();
  await migratedTemplate(c);
  const name = `test_${process.pid}_${++created}`;
  await c.admin(`create database ${name} template ${TEMPLATE}`);
  return c.url(name, options);
}

/** A fresh, empty (not migrated) database; its DATABASE_URL. For tests of `migrate` itself. */
export async function emptyDatabaseUrl(): Promise<string> {
  const c = await testCluster();
  const name = `test_${process.pid}_${++created}`;
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
