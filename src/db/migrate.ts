import { Migrator, type Migration, type MigrationResult } from 'kysely/migration';
import type { Db } from './store.js';
import { migrations } from './migrations/index.js';
import { PostgresColumnTypesPlugin } from './migrations/postgres-column-types.js';
import { isPostgres } from './postgres/dialect-sql.js';
import { sessionOf } from './postgres/store.js';

/**
 * Brings the store to the latest schema. Returns the migrations applied by this call.
 * On PostgreSQL, Kysely's Migrator runs every pending migration in one transaction (its
 * adapter supports transactional DDL), under an advisory lock: a migration failing half-way
 * leaves the schema as it was, and two processes starting at once migrate once.
 */
export async function migrateToLatest(
  db: Db,
  options: {
    /** Tests: these in place of the project's. */ migrations?: Record<string, Migration>;
  } = {},
): Promise<MigrationResult[]> {
  const all = options.migrations ?? migrations;
  // PostgreSQL: a session of its own (Kysely's migration lock is a session advisory lock),
  // DATABASE_DIRECT_URL's when DATABASE_URL is a transaction pooler.
  const session = isPostgres(db) ? await sessionOf(db) : undefined;
  const target = session?.db ?? db;
  const migrator = new Migrator({
    db: isPostgres(target) ? target.withPlugin(new PostgresColumnTypesPlugin()) : target,
    provider: { getMigrations: async () => all },
  });
  const { error, results } = await migrator.migrateToLatest().finally(() => session?.release());
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, {
      cause: error,
    });
  }
  return results ?? [];
}
