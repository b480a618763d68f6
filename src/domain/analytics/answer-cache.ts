/**
 * Answers read from the analytics rollups, kept until the rollups change. The rollups change
 * only in a transaction that also bumps `analytics_rollup_version` (interactions.ts), so an
 * answer computed while the version stayed the same is the answer for that version, whichever
 * process wrote; the version is read again at every use, so a kept answer is never stale.
 * Answers that also depend on the catalogue (which products are active, their brands) add the
 * catalogue's version to their key.
 *
 * One cache per store connection (a Kysely instance). Inside a transaction (a report's snapshot
 * on a connection of its own) nothing is kept: the answer is computed.
 */
import { readRollupVersion } from '../../db/queries/analytics.js';
import type { Executor } from '../../db/transaction.js';

/** Answers kept per store at most (each is a period's series or a page: a few kB). */
export const MAX_KEPT_ANSWERS = 500;

interface Cache {
  version: number;
  answers: Map<string, unknown>;
  /** Answers being computed: a second request for one waits for it instead of computing it too. */
  pending: Map<string, Promise<unknown>>;
}

const caches = new WeakMap<object, Cache>();

/**
 * The answer for `key` at the rollups' current version: kept, or computed by `compute` (once,
 * however many ask at the same time). `key` must name everything the answer depends on besides
 * the rollups (the function, the period, the options, a catalogue version).
 */
export async function rollupAnswer<T>(
  db: Executor,
  key: string,
  compute: () => Promise<T>,
): Promise<T> {
  if (db.isTransaction) return compute();
  let cache = caches.get(db);
  if (!cache) {
    cache = { version: -1, answers: new Map(), pending: new Map() };
    caches.set(db, cache);
  }
  const version = await readRollupVersion(db);
  if (version !== cache.version) {
    cache.version = version;
    cache.answers.clear();
  }
  if (cache.answers.has(key)) {
    const value = cache.answers.get(key) as T;
    // Most recently used last: the oldest is dropped first.
    cache.answers.delete(key);
    cache.answers.set(key, value);
    return value;
  }
  const pendingKey = `${version}\u0000${key}`;
  const waiting = cache.pending.get(pendingKey) as Promise<T> | undefined;
  if (waiting) return waiting;
  const c = cache;
  const computing = (async () => {
    try {
      const value = await compute();
      // Kept only when no transaction added to the rollups while it was computed.
      if ((await readRollupVersion(db)) === version && c.version === version) {
        c.answers.set(key, value);
        if (c.answers.size > MAX_KEPT_ANSWERS) c.answers.delete(c.answers.keys().next().value!);
      }
      return value;
    } finally {
      c.pending.delete(pendingKey);
    }
  })();
  c.pending.set(pendingKey, computing);
  return computing;
}
