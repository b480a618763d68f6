import path from 'node:path';
import { pino } from 'pino';
import type { Test } from 'tap';
import { loadConfig, type Config } from '../../src/config.js';
import { openStore, type Db, type Store } from '../../src/db/store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { testStoreEnv } from './store.js';
import { ownTestDir } from './testdir.js';

export interface TestStore {
  store: Store;
  db: Db;
  config: Config;
  dir: string;
}

/**
 * A migrated store (a SQLite file in the test's own directory, or a fresh PostgreSQL database
 * with AGENTSHELF_TEST_STORE=postgres), with PUBLIC_DIR beside it.
 */
export async function startTestStore(
  t: Test,
  env: Record<string, string> = {},
): Promise<TestStore> {
  const dir = ownTestDir(t);
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    PUBLIC_DIR: path.join(dir, 'public'),
    FEEDS_URL: 'https://feeds.example.com',
    PORT: '0',
    FEEDS_PORT: '0',
    LOG_LEVEL: 'silent',
    ...(await testStoreEnv(dir)),
    ...env,
  });
  const store = openStore(config);
  await migrateToLatest(store.db);
  t.teardown(() => store.close());
  return { store, db: store.db, config, dir };
}

/**
 * What a pipeline run gets: the store's connection for writes and a second, read-only
 * connection on the same file for streaming the catalogue. Closed when the test ends.
 */
export function createPipelineContext(
  t: Test,
  store: Store,
  config: Config,
  options: { now?: () => Date } = {},
): PipelineContext {
  const reader = store.openReader();
  t.teardown(() => reader.destroy());
  return {
    db: store.db,
    reader,
    config,
    logger: pino({ level: 'silent' }),
    now: options.now ?? (() => new Date()),
  };
}

/** A clock a test moves by hand. */
export function createClock(start = '2026-11-21T10:00:00.000Z') {
  let ms = Date.parse(start);
  return {
    now: () => new Date(ms),
    advance(seconds: number) {
      ms += seconds * 1000;
    },
    set(iso: string) {
      ms = Date.parse(iso);
    },
  };
}
