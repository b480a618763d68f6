import {
  CompiledQuery,
  PostgresDialect,
  PostgresDriver,
  type DatabaseConnection,
  type Dialect,
  type PostgresDialectConfig,
  type TransactionSettings,
} from 'kysely';

/**
 * The advisory lock every transaction takes first (any 64-bit number no other code uses:
 * "agentshe" in ASCII).
 */
export const WRITE_LOCK_KEY = '7018140291196487781';

/**
 * Transactions that hold the store's write lock from their first statement, as SQLite's
 * BEGIN IMMEDIATE does (db/sqlite/connection.ts). The domain's transactions read, decide and
 * write (an idempotency key checked then stored, a status read then its count adjusted);
 * SQLite runs one at a time, and so does this, across every process on the database, so
 * those decisions hold on PostgreSQL too without a retry loop for serialization failures.
 * Statements outside a transaction (reads, single writes) do not wait for it.
 */
class WriteLockPostgresDriver extends PostgresDriver {
  override async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    await super.beginTransaction(connection, settings);
    await connection.executeQuery(
      CompiledQuery.raw(`select pg_advisory_xact_lock(${WRITE_LOCK_KEY})`),
    );
  }
}

/** PostgresDialect with WriteLockPostgresDriver (its config is private, so by composition). */
export function writeLockPostgresDialect(config: PostgresDialectConfig): Dialect {
  const base = new PostgresDialect(config);
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new WriteLockPostgresDriver(config),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}
