/**
 * Several `serve` processes writing one store at once (issue 25): with no global write lock
 * on PostgreSQL, each read-decide-write path holds by its own guarantee (docs/postgresql.md,
 * "What each write path locks"). Two processes take the same writes at the same time
 * (a client id, an Idempotency-Key, a product's status and category, a delete), then the
 * store is checked against a recount and the webhook receiver against the outbox. On
 * PostgreSQL a watcher reads pg_locks all through the load: no advisory lock is ever held.
 */
import { sql } from 'kysely';
import t from 'tap';
import { startReceiver, waitUntil, type ReceivedRequest } from '../support/receiver.js';
import { productBody } from '../support/server.js';
import { countersEqualRecount, openShared, serveShared, sharedStore } from '../support/several.js';
import { onPostgres } from '../support/store.js';
import type { Db } from '../../src/db/store.js';

const SERVE_ENV = {
  ALLOW_PRIVATE_TARGETS: 'true',
  RATE_LIMITS: 'off',
  AUDIT_LOG: 'off',
  FEEDS_DEBOUNCE_MS: '3600000',
  FEEDS_CRON: '0 0 1 1 *',
  WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
  // Renewed every third of it: long enough that a live process's lease never lapses on a
  // busy machine (a lapse is a legitimate second delivery, which these checks count).
  WEBHOOK_LEASE_MS: '20000',
};

const STATUSES = ['active', 'draft', 'inactive'] as const;
const CATEGORIES = ['Apparel > Shoes', 'Apparel > Hats', 'Garden'] as const;
/** Products every process writes at once, by client id. */
const SHARED_IDS = ['race-0', 'race-1', 'race-2', 'race-3'];
const KEYS = 12;
const UPDATES = 48;
const CREATES = 24;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Reads pg_locks until stopped: every advisory lock seen in this store's database, and how
 * many reads were made. Only this database's: the cluster is shared with other test files,
 * whose migrations take Kysely's advisory lock.
 */
function watchAdvisoryLocks(db: Db) {
  const seen: unknown[] = [];
  let reads = 0;
  let watching = true;
  const done = (async () => {
    while (watching) {
      const { rows } = await sql<{
        pid: number;
        objid: number;
      }>`select pid, objid from pg_locks where locktype = 'advisory'
        and database = (select oid from pg_database where datname = current_database())`.execute(
        db,
      );
      seen.push(...rows);
      reads++;
    }
  })().catch((err: unknown) => {
    watching = false;
    seen.push({ error: String(err) });
  });
  return {
    stop: async () => {
      watching = false;
      await done;
      return { seen, reads };
    },
  };
}

t.test(
  'two serve processes writing the same rows at once keep every decision; no advisory lock',
  async (t) => {
    const shared = await sharedStore(t);
    const receiver = await startReceiver(t);
    const servers = [
      await serveShared(t, shared, SERVE_ENV),
      await serveShared(t, shared, SERVE_ENV),
    ];
    const store = openShared(t, shared);
    const headers = {
      authorization: `Bearer ${shared.adminKey}`,
      'content-type': 'application/json',
    };
    const call = async (
      n: number,
      method: string,
      path: string,
      body?: unknown,
      extra: Record<string, string> = {},
    ): Promise<Answer> => {
      const res = await fetch(servers[n % 2]!.url + path, {
        method,
        headers: { ...headers, ...extra },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return {
        status: res.status,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    };
    const hook = await call(0, 'POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['product.created', 'product.updated', 'product.deleted'],
    });
    t.equal(hook.status, 201, 'the endpoint is registered');

    const watcher = onPostgres() ? watchAdvisoryLocks(store.db) : undefined;
    t.teardown(() => watcher?.stop());
    // 1. The same client ids through both processes at once: one 201 each, the rest 409.
    const racing = await Promise.all(
      SHARED_IDS.flatMap((id) =>
        [0, 1, 2, 3].map((n) => call(n, 'POST', '/v1/products', productBody({ id, name: id }))),
      ),
    );
    for (const id of SHARED_IDS) {
      const statuses = racing
        .filter((_, i) => SHARED_IDS[Math.floor(i / 4)] === id)
        .map((r) => r.status)
        .sort();
      t.same(statuses, [201, 409, 409, 409], `${id}: created once, refused three times`);
    }
    // 2. Idempotency-Keys sent three times each, through both processes at once.
    const keyed = await Promise.all(
      Array.from({ length: KEYS * 3 }, (_, i) =>
        call(i, 'POST', '/v1/products', productBody({ name: `Keyed ${i % KEYS}` }), {
          'idempotency-key': `key-${i % KEYS}`,
        }),
      ),
    );
    for (let k = 0; k < KEYS; k++) {
      const answers = keyed.filter((_, i) => i % KEYS === k);
      t.same(
        answers.map((a) => a.status),
        [201, 201, 201],
        `key-${k}: every try answered as the first`,
      );
      t.equal(new Set(answers.map((a) => a.body.id)).size, 1, `key-${k}: one product`);
    }
    // 3. Updates of the shared products (status and category moving every which way),
    // creates in every status and category, and each shared product but one deleted twice.
    const updates = Array.from({ length: UPDATES }, (_, i) =>
      call(i, 'PUT', `/v1/products/${SHARED_IDS[i % SHARED_IDS.length]}`, {
        status: STATUSES[(i * 7) % 3],
        category: CATEGORIES[(i * 5) % 3],
        name: `Update ${i}`,
      }),
    );
    const creates = Array.from({ length: CREATES }, (_, i) =>
      call(
        i,
        'POST',
        '/v1/products',
        productBody({
          name: `New ${i}`,
          status: STATUSES[i % 3],
          category: CATEGORIES[(i + 1) % 3],
        }),
      ),
    );
    const written = await Promise.all([...updates, ...creates]);
    t.ok(
      written.every((w) => w.status === 200 || w.status === 201),
      `every update and create succeeded: ${[...new Set(written.map((w) => w.status))].join(',')}`,
    );
    const deletes = await Promise.all(
      SHARED_IDS.slice(1).flatMap((id, i) => [
        call(i, 'DELETE', `/v1/products/${id}`),
        call(i + 1, 'DELETE', `/v1/products/${id}`),
      ]),
    );
    t.same(
      deletes.map((d) => d.status).sort(),
      [204, 204, 204, 404, 404, 404],
      'each product deleted once; the second delete finds nothing',
    );

    if (watcher) {
      const { seen, reads } = await watcher.stop();
      t.ok(reads > 0, `pg_locks read ${reads} times during the load`);
      t.same(seen, [], 'no advisory lock was held by any process during the load');
    }

    // The counters equal a recount.
    await countersEqualRecount(t, store.db);
    const keyedProducts = await store.db
      .selectFrom('products')
      .select('name')
      .where('name', 'like', 'Keyed %')
      .execute();
    t.equal(keyedProducts.length, KEYS, 'one product per Idempotency-Key');

    // Every event reaches the endpoint once, in event order.
    const events = await store.db
      .selectFrom('events')
      .select('id')
      .where('type', 'like', 'product.%')
      .orderBy('seq')
      .execute();
    const order = events.map((e) => e.id);
    const idOf = (req: ReceivedRequest) => String(req.headers['webhook-id']);
    await waitUntil(
      'every event delivered',
      () => new Set(receiver.requests.map(idOf)).size >= order.length || undefined,
      60_000,
    );
    t.same(receiver.requests.map(idOf), order, 'every event delivered once, in event order');
  },
);
