import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { afterCommit, storeOf, type Executor } from '../db/transaction.js';

/**
 * What the domain announces after a change commits, whatever made it (API, CLI, seed, sync,
 * import):
 * - catalogueChanged: products were created, changed or deleted (the pipeline rebuilds);
 * - feedsChanged: a feed's definition or status changed (the pipeline runs);
 * - eventRecorded: the outbox has a new event (the webhook worker reads it);
 * - webhooksChanged: an endpoint was added, changed or removed (the worker looks again);
 * - reportsChanged: a report was requested (the report worker looks for pending ones).
 */
export type StoreChange =
  'catalogueChanged' | 'feedsChanged' | 'eventRecorded' | 'webhooksChanged' | 'reportsChanged';

type Listener = () => void;

/** The listeners of one store; the composition root (server.ts) subscribes. */
export class StoreChanges {
  private readonly listeners = new Map<StoreChange, Set<Listener>>();

  /** Calls `listener` after every committed change of this kind; returns the unsubscribe. */
  subscribe(change: StoreChange, listener: Listener): () => void {
    let set = this.listeners.get(change);
    if (!set) this.listeners.set(change, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Listeners run in turn; each must be quick and must not throw (schedule, do not work). */
  emit(change: StoreChange): void {
    for (const listener of this.listeners.get(change) ?? []) listener();
  }
}

const notifiers = new WeakMap<object, StoreChanges>();
/** Kinds already announced by an open transaction: a bulk write announces each kind once. */
const pending = new WeakMap<Transaction<Database>, Set<StoreChange>>();

/** The notifier of the store `executor` runs on (one per store, made on first use). */
export function changesOf(executor: Executor): StoreChanges {
  const store = storeOf(executor);
  let changes = notifiers.get(store);
  if (!changes) notifiers.set(store, (changes = new StoreChanges()));
  return changes;
}

/**
 * Announces a change made on `executor` once it commits (at once outside a transaction; never
 * if it rolls back). A transaction announces each kind once, however many rows it changed.
 */
export function announceChange(executor: Executor, change: StoreChange): void {
  const changes = changesOf(executor);
  if (executor.isTransaction) {
    const trx = executor as Transaction<Database>;
    let kinds = pending.get(trx);
    if (!kinds) pending.set(trx, (kinds = new Set()));
    if (kinds.has(change)) return;
    kinds.add(change);
  }
  afterCommit(executor, () => changes.emit(change));
}
