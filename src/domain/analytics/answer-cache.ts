/**
 * Answers read from the analytics rollups, kept until what they read changes. The traffic
 * rollups, the product rollups and the published brands change only with a bump of their
 * change version (migration 20261126020000, interactions.ts, queries/discovery.ts), and the
 * catalogue's products with a product event or a change of the counts per status (the version
 * the pipeline's staleness check reads). An answer computed while what it reads stayed the same
 * is the answer for that state, whichever process wrote; the versions are read again at every
 * use, so a kept answer is never stale. An answer names what it reads, so the product answers
 * (changed by events) outlive the request traffic a live server records every second.
 *
 * One cache per store connection (a Kysely instance). Inside a transaction (a report's snapshot
 * on a connection of its own) nothing is kept: the answer is computed.
 */
import { readChangeVersions, type ChangeVersionName } from '../../db/queries/change-versions.js';
import { selectProductsVersion } from '../../db/queries/catalogue-version.js';
import type { Db } from '../../db/store.js';
import type { Executor } from '../../db/transaction.js';

/** Answers kept per store at most (most are a few kB; a 1,000-product list about 200 kB). */
export const MAX_KEPT_ANSWERS = 200;

/** What an answer reads. */
export type AnswerSource =
  /** analytics_daily_traffic, _agents, _brands. */
  | 'traffic'
  /** analytics_daily_products, _revenue. */
  | 'products'
  /** discovery_brands. */
  | 'brands'
  /** products: status, brand, counts. */
  | 'catalogue';

const VERSION_OF: Record<Exclude<AnswerSource, 'catalogue'>, ChangeVersionName> = {
  traffic: 'analytics_traffic',
  products: 'analytics_products',
  brands: 'discovery_brands',
};

interface Cache {
  answers: Map<string, { stamp: string; value: unknown }>;
  /** Answers being computed: another request for one waits for it instead of computing it too. */
  pending: Map<string, Promise<unknown>>;
}

const caches = new WeakMap<object, Cache>();

async function stampOf(db: Executor, reads: readonly AnswerSource[]): Promise<string> {
  const versions = await readChangeVersions(db);
  let stamp = '';
  for (const source of reads) {
    if (source === 'catalogue') {
      const c = await selectProductsVersion(db as Db);
      stamp += `;${c.productEvent};${c.counts.map((r) => `${r.status}=${r.count}`).join(',')}`;
    } else stamp += `;${versions.get(VERSION_OF[source]) ?? 0}`;
  }
  return stamp;
}

/** Frozen, so a caller that changed a kept answer would fail at once instead of corrupting it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The answer for `key` as the store is now: kept, or computed by `compute` (once, however many
 * ask at the same time). `reads` names every source it reads; `key` everything else it depends
 * on (the function, the period, the options). The answer is frozen: callers copy what they
 * change.
 */
export async function keptAnswer<T>(
  db: Executor,
  key: string,
  reads: readonly AnswerSource[],
  compute: () => Promise<T>,
): Promise<T> {
  if (db.isTransaction) return compute();
  let cache = caches.get(db);
  if (!cache) {
    cache = { answers: new Map(), pending: new Map() };
    caches.set(db, cache);
  }
  const stamp = await stampOf(db, reads);
  const kept = cache.answers.get(key);
  if (kept) {
    cache.answers.delete(key);
    if (kept.stamp === stamp) {
      // Most recently used last: the oldest is dropped first.
      cache.answers.set(key, kept);
      return kept.value as T;
    }
  }
  const pendingKey = `${stamp}\u0000${key}`;
  const waiting = cache.pending.get(pendingKey) as Promise<T> | undefined;
  if (waiting) return waiting;
  const c = cache;
  const computing = (async () => {
    try {
      const value = deepFreeze(await compute());
      // Kept only when nothing it depends on changed while it was computed.
      if ((await stampOf(db, reads)) === stamp) {
        c.answers.set(key, { stamp, value });
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
