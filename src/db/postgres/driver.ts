import {
  CompiledQuery,
  PostgresDialect,
  PostgresDriver,
  type DatabaseConnection,
  type Dialect,
  type PostgresDialectConfig,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';

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

/** Statement texts that get a server-side prepared statement, at most (per connection). */
const MAX_PREPARED = 500;
const statementNames = new Map<string, string>();

/**
 * Runs the store's queries as named prepared statements: PostgreSQL parses and plans a text
 * once per connection instead of on every run (a primary-key read costs about as much to plan
 * as to run). The texts are Kysely's compiled SQL, with parameters apart, so they repeat; the
 * first MAX_PREPARED distinct texts are named (the hot paths come first), later ones run as
 * before, so a stream of one-off statements never fills the server's memory.
 */
export function preparingQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2) {
      let name = statementNames.get(text);
      if (name === undefined && statementNames.size < MAX_PREPARED) {
        name = `agentshelf_${statementNames.size}`;
        statementNames.set(text, name);
      }
      if (name !== undefined) return query({ name, text, values });
    }
    return query(...args);
  };
}
