/**
 * A randomized load on two `serve` processes sharing one store (issue 25): API writes on a
 * small set of client ids (creates, updates moving status and category, deletes), the same
 * Idempotency-Keys sent to both processes, analytics events posted twice, syncs of a feed
 * integration whose file changes between them, and pipeline runs (a feed regenerated after
 * each change), all at once. Afterwards the store must agree with a recount: one product per
 * Idempotency-Key, product and category counts, analytics rollups, the integration's
 * mappings; and every product event reaches each endpoint once, in event order.
 *
 * The run is drawn from a seed (AGENTSHELF_TEST_SEED to repeat one; printed otherwise).
 */
import { randomInt } from 'node:crypto';
import t from 'tap';
import { startFeedServer } from '../support/feed-server.js';
import { feedProduct, jsonl } from '../support/integrations.js';
import { startReceiver, waitUntil, type ReceivedRequest } from '../support/receiver.js';
import { productBody } from '../support/server.js';
import { countersEqualRecount, openShared, serveShared, sharedStore } from '../support/several.js';

const SERVE_ENV = {
  ALLOW_PRIVATE_TARGETS: 'true',
  RATE_LIMITS: 'off',
  AUDIT_LOG: 'off',
  FEEDS_DEBOUNCE_MS: '100',
  FEEDS_CRON: '0 0 1 1 *',
  WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
  // Renewed every third of it: long enough that a live process's lease never lapses on a
  // busy machine (a lapse is a legitimate second delivery, which these checks count).
  WEBHOOK_LEASE_MS: '20000',
};

const STATUSES = ['active', 'draft', 'inactive'] as const;
const CATEGORIES = ['Apparel > Shoes', 'Apparel > Hats', 'Garden', null] as const;
const CLIENT_IDS = 8;
const KEYS = 10;
const OPERATIONS = 160;
const WORKERS = 6;

/** mulberry32: a small seeded generator, so a failing run can be repeated. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]! };
}

type Op =
  | { kind: 'create'; id: string; status: string; category: string | null }
  | { kind: 'update'; id: string; status: string; category: string | null }
  | { kind: 'delete'; id: string }
  | { kind: 'keyed'; key: number }
  | { kind: 'analytics'; id: string; event: number }
  | { kind: 'sync'; version: number };

function drawOperations(seed: number): Op[] {
  const g = generator(seed);
  const ops: Op[] = [];
  for (let i = 0; i < OPERATIONS; i++) {
    const id = `cid-${g.int(CLIENT_IDS)}`;
    const roll = g.int(100);
    if (roll < 25)
      ops.push({ kind: 'create', id, status: g.pick(STATUSES), category: g.pick(CATEGORIES) });
    else if (roll < 50)
      ops.push({ kind: 'update', id, status: g.pick(STATUSES), category: g.pick(CATEGORIES) });
    else if (roll < 60) ops.push({ kind: 'delete', id });
    else if (roll < 78) ops.push({ kind: 'keyed', key: g.int(KEYS) });
    else if (roll < 92) ops.push({ kind: 'analytics', id, event: g.int(40) });
    else ops.push({ kind: 'sync', version: g.int(3) });
  }
  return ops;
}

/** The feed file of a version: items come, change price and go between versions. */
function feedFile(version: number): string {
  const items = [];
  for (let i = 0; i < 12; i++) {
    if ((i + version) % 5 === 0) continue;
    items.push(
      feedProduct(`F${i}`, {
        price: `${10 + ((i * (version + 1)) % 7)}.00 USD`,
        product_category: CATEGORIES[(i + version) % 3]!,
      }),
    );
  }
  return jsonl(items);
}

t.test(
  'a randomized load on two serve processes leaves the store equal to a recount',
  async (t) => {
    const seed = Number(process.env.AGENTSHELF_TEST_SEED ?? randomInt(2 ** 31));
    t.comment(`seed ${seed} (AGENTSHELF_TEST_SEED=${seed} repeats this run's operations)`);
    const shared = await sharedStore(t);
    const receiver = await startReceiver(t);
    const feeds = await startFeedServer(t);
    feeds.set('/products.jsonl', feedFile(0));
    const servers = [
      await serveShared(t, shared, SERVE_ENV),
      await serveShared(t, shared, SERVE_ENV),
    ];
    const store = openShared(t, shared);
    const headers = {
      authorization: `Bearer ${shared.adminKey}`,
      'content-type': 'application/json',
    };
    const g = generator(seed ^ 0x5eed);
    const call = async (
      method: string,
      path: string,
      body?: unknown,
      extra: Record<string, string> = {},
    ) => {
      const res = await fetch(servers[g.int(servers.length)]!.url + path, {
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
    for (let e = 0; e < 2; e++) {
      const hook = await call('POST', '/v1/webhooks', {
        url: `${receiver.url}?endpoint=${e}`,
        events: ['product.created', 'product.updated', 'product.deleted'],
      });
      t.equal(hook.status, 201);
    }
    const integration = await call('POST', '/v1/integrations', {
      platform: 'feed',
      settings: { url: feeds.url('/products.jsonl'), max_drop: 1 },
    });
    t.equal(integration.status, 201);
    const integrationId = integration.body.id as string;
    const feed = await call('POST', '/v1/feeds', { name: 'Everything', format: 'json' });
    t.equal(feed.status, 201, 'a feed, regenerated by the pipeline after changes');

    const ops = drawOperations(seed);
    const unexpected: string[] = [];
    const keyedIds = new Map<number, Set<unknown>>();
    const expect = (op: Op, status: number, allowed: number[]) => {
      if (!allowed.includes(status)) unexpected.push(`${JSON.stringify(op)}: ${status}`);
    };
    const run = async (op: Op) => {
      switch (op.kind) {
        case 'create': {
          const body = productBody({ id: op.id, status: op.status, category: op.category });
          return expect(op, (await call('POST', '/v1/products', body)).status, [201, 409]);
        }
        case 'update': {
          const body = { status: op.status, category: op.category };
          return expect(op, (await call('PUT', `/v1/products/${op.id}`, body)).status, [200, 404]);
        }
        case 'delete':
          return expect(op, (await call('DELETE', `/v1/products/${op.id}`)).status, [204, 404]);
        case 'keyed': {
          const body = productBody({ name: `Keyed ${op.key}` });
          const res = await call('POST', '/v1/products', body, {
            'idempotency-key': `k-${op.key}`,
          });
          expect(op, res.status, [201]);
          const ids = keyedIds.get(op.key) ?? new Set();
          keyedIds.set(op.key, ids.add(res.body.id));
          return;
        }
        case 'analytics': {
          // Sent twice: the second is a duplicate by its id. 422 when the product is gone.
          const event = {
            id: `ev-${op.event}`,
            type: op.event % 2 ? 'view' : 'click',
            product_id: op.id,
          };
          for (let i = 0; i < 2; i++) {
            expect(op, (await call('POST', '/v1/analytics/events', event)).status, [200, 422]);
          }
          return;
        }
        case 'sync': {
          feeds.set('/products.jsonl', feedFile(op.version));
          const res = await call('POST', `/v1/integrations/${integrationId}/sync`);
          return expect(op, res.status, [202, 409]);
        }
      }
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (next < ops.length) await run(ops[next++]!);
      }),
    );
    t.same(unexpected, [], 'every answer was one the operation allows');
    await waitUntil(
      'the syncs to end',
      async () =>
        (
          await store.db
            .selectFrom('sync_runs')
            .select('id')
            .where('status', '=', 'running')
            .execute()
        ).length === 0,
      30_000,
    );

    // One product per Idempotency-Key, whichever process answered.
    for (const [key, ids] of keyedIds)
      t.equal(ids.size, 1, `k-${key}: one product id in every answer`);
    const keyed = await store.db
      .selectFrom('products')
      .select('name')
      .where('name', 'like', 'Keyed %')
      .execute();
    t.equal(keyed.length, keyedIds.size, 'one product per Idempotency-Key');

    // Counters equal a recount.
    await countersEqualRecount(t, store.db);

    // Analytics rollups equal a recount of the interactions stored (each event id once).
    const stored = await store.db
      .selectFrom('interactions')
      .select(({ fn }) => ['event_type', fn.countAll<number>().as('n')])
      .where('event_type', 'is not', null)
      .groupBy('event_type')
      .execute();
    const storedBy = Object.fromEntries(stored.map((r) => [r.event_type, Number(r.n)]));
    const rolled = await store.db
      .selectFrom('analytics_daily_products')
      .select(({ fn }) => [
        fn.sum<number>('views').as('views'),
        fn.sum<number>('clicks').as('clicks'),
      ])
      .executeTakeFirstOrThrow();
    t.equal(Number(rolled.views ?? 0), storedBy.view ?? 0, 'views rolled up equal a recount');
    t.equal(Number(rolled.clicks ?? 0), storedBy.click ?? 0, 'clicks rolled up equal a recount');
    const dupes = await store.db
      .selectFrom('interactions')
      .select('dedupe_key')
      .where('dedupe_key', 'is not', null)
      .groupBy('dedupe_key')
      .having(({ fn }) => fn.countAll(), '>', 1)
      .execute();
    t.same(dupes, [], 'every analytics event id stored once');

    // The integration's mappings: one per external id, each naming a product that exists.
    const orphans = await store.db
      .selectFrom('integration_products as m')
      .leftJoin('products as p', 'p.id', 'm.product_id')
      .select('m.external_id')
      .where('m.integration_id', '=', integrationId)
      .where('p.id', 'is', null)
      .execute();
    t.same(orphans, [], 'every mapping names a product that exists');
    const mapped = await store.db
      .selectFrom('integration_products')
      .select(({ fn }) => ['product_id', fn.countAll<number>().as('n')])
      .groupBy('product_id')
      .having(({ fn }) => fn.countAll(), '>', 1)
      .execute();
    t.same(mapped, [], 'no product mapped twice');

    // Every product event reaches each endpoint once, in event order.
    const events = await store.db
      .selectFrom('events')
      .select('id')
      .where('type', 'like', 'product.%')
      .orderBy('seq')
      .execute();
    const order = events.map((e) => e.id);
    const byEndpoint = () => {
      const seen: string[][] = [[], []];
      for (const req of receiver.requests as ReceivedRequest[]) {
        const endpoint = Number(new URL(req.path, 'http://x').searchParams.get('endpoint'));
        seen[endpoint]!.push(String(req.headers['webhook-id']));
      }
      return seen;
    };
    await waitUntil(
      'every event at both endpoints',
      () => byEndpoint().every((ids) => ids.length >= order.length) || undefined,
      60_000,
    );
    for (const [i, ids] of byEndpoint().entries()) {
      t.same(ids, order, `endpoint ${i}: every event once, in event order`);
    }
    // Stopped here, not in the teardown: a pipeline run may still be writing the published
    // tree, which the test directory's removal (an earlier teardown) would race.
    for (const s of servers) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
  },
);
