import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** What a query or a domain write runs on: the store, or a transaction already open on it. */
export type Executor = Kysely<Database> | Transaction<Database>;

interface OpenTransaction {
  /** The store the transaction was opened on. */
  root: Kysely<Database>;
  /** Run after the commit, in the order they were registered; dropped on rollback. */
  afterCommit: (() => void)[];
}

/** Transactions opened by withTransaction, with what they carry until they end. */
const open = new WeakMap<Transaction<Database>, OpenTransaction>();

/**
 * Runs `fn` in a transaction: the one `executor` already is (the caller decides the unit of
 * work: a route, a sync or an import can put several changes in one), or a new one on the
 * store. When this call opened the transaction, the callbacks given to afterCommit run once
 * it has committed; a rollback (fn throws) drops them.
 */
export async function withTransaction<T>(
  executor: Executor,
  fn: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (executor.isTransaction) return fn(executor as Transaction<Database>);
  const db = executor as Kysely<Database>;
  let state: OpenTransaction | undefined;
  const result = await db.transaction().execute(async (trx) => {
    state = { root: db, afterCommit: [] };
    open.set(trx, state);
    return fn(trx);
  });
  runCallbacks(state!.afterCommit);
  return result;
}

/**
 * Runs `fn` once the changes made on `executor` are committed: after the outermost
 * withTransaction commits, or at once when `executor` is not a transaction. Nothing runs when
 * the transaction rolls back. For side effects outside the store (wake a worker, schedule a
 * build), which must never announce a change that did not happen.
 */
export function afterCommit(executor: Executor, fn: () => void): void {
  if (!executor.isTransaction) {
    runCallbacks([fn]);
    return;
  }
  openTransaction(executor as Transaction<Database>).afterCommit.push(fn);
}

/** The store an executor runs on (itself, or the store its transaction was opened on). */
export function storeOf(executor: Executor): Kysely<Database> {
  if (!executor.isTransaction) return executor as Kysely<Database>;
  return openTransaction(executor as Transaction<Database>).root;
}

function openTransaction(trx: Transaction<Database>): OpenTransaction {
  const state = open.get(trx);
  if (!state) {
    throw new Error(
      'This transaction was not opened by withTransaction, so nothing knows when it commits; open it with withTransaction.',
    );
  }
  return state;
}

/**
 * Every callback runs even when one throws: the change is committed, and each side effect
 * is owed. The first error is then thrown to the caller, so it is not lost.
 */
function runCallbacks(callbacks: (() => void)[]): void {
  let failure: { error: unknown } | undefined;
  for (const fn of callbacks) {
    try {
      fn();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/**
 * PostgreSQL's codes for a transaction it ended to break a deadlock (40P01) or a
 * serialization conflict (40001): nothing of it was written, and run again it can succeed.
 */
const TRANSIENT_CONFLICTS = new Set(['40P01', '40001']);

/** Whether an error is a transaction PostgreSQL rolled back for a transient conflict. */
export function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_CONFLICTS.has(code);
}

/**
 * Whether an error is a lock PostgreSQL gave up waiting for (55P03, lock_not_available: past
 * `lock_timeout`, see DialectSql.lockTableWrites' waitMs): the statement failed and its
 * transaction is rolled back; nothing of it was written.
 */
export function isLockUnavailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '55P03';
}

/**
 * Runs a whole transaction (`run` opens and commits it) again when PostgreSQL rolled it back
 * for a transient conflict, up to `tries` times in all; any other error, or the last
 * conflict, is thrown. For writes whose failure costs more than a retry (a record of
 * attempts that failed would send them again).
 */
export async function retryOnConflict<T>(
  run: () => Promise<T>,
  onRetry: (err: unknown, attempt: number) => void,
  tries = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= tries || !isTransientConflict(err)) throw err;
      onRetry(err, attempt);
    }
  }
}
