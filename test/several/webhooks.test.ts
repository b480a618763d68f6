import t from 'tap';
import { startReceiver, waitUntil, type ReceivedRequest } from '../support/receiver.js';
import { productBody } from '../support/server.js';
import { openShared, serveShared, sharedStore } from '../support/several.js';

const EVENTS = 400;
const ENDPOINTS = 4;

/** What several processes need of serve here: no limits, no pipeline runs, quick retries. */
const SERVE_ENV = {
  ALLOW_PRIVATE_TARGETS: 'true',
  RATE_LIMITS: 'off',
  AUDIT_LOG: 'off',
  FEEDS_DEBOUNCE_MS: '3600000',
  FEEDS_CRON: '0 0 1 1 *',
  WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
  // Long enough that a live process's lease never lapses on a busy machine (renewed every
  // third of it); the killed one's are taken at once: its pid is gone on this host.
  WEBHOOK_LEASE_MS: '20000',
};

/** The endpoints a serve process last logged it delivers to (its share among the live ones). */
function endpointsOf(stdout: string): string[] | undefined {
  let last: string[] | undefined;
  for (const line of stdout.split('\n')) {
    if (!line.includes('webhook endpoints this process delivers to')) continue;
    last = (JSON.parse(line) as { webhooks: string[] }).webhooks;
  }
  return last;
}

function eventIdOf(req: ReceivedRequest): string {
  return String(req.headers['webhook-id'] ?? req.headers['x-webhook-id']);
}

t.test(
  'two serve processes deliver 400 events to 4 endpoints once each, in order, while one is SIGKILLed',
  async (t) => {
    const shared = await sharedStore(t);
    const receiver = await startReceiver(t);
    const a = await serveShared(t, shared, SERVE_ENV);
    const b = await serveShared(t, shared, SERVE_ENV);
    const headers = {
      authorization: `Bearer ${shared.adminKey}`,
      'content-type': 'application/json',
    };
    const post = async (base: string, path: string, body: unknown) => {
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    const endpoints: string[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const hook = await post(i % 2 ? b.url : a.url, '/v1/webhooks', {
        url: `${receiver.url}?endpoint=${i}`,
        events: ['product.created'],
      });
      endpoints.push(hook.id);
    }
    // The endpoints are shared: two each, every one with one process (once both have read
    // the other's heartbeat and all four endpoints).
    const all = [...endpoints].sort().join();
    await waitUntil(
      'each process to deliver to two endpoints, none twice',
      () => {
        const ofA = endpointsOf(a.stdout());
        const ofB = endpointsOf(b.stdout());
        return ofA?.length === 2 && ofB?.length === 2 && [...ofA, ...ofB].sort().join() === all;
      },
      30_000,
    );
    t.pass('the endpoints are shared: two each, none twice');

    // Products are created through both processes, four at a time.
    let made = 0;
    let killed = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      while (made < EVENTS) {
        const n = ++made;
        // Once A is killed, B takes every write.
        const toA = !killed && w % 2 === 0;
        try {
          await post(toA ? a.url : b.url, '/v1/products', productBody({ name: `Product ${n}` }));
        } catch (err) {
          // A request A was answering when it was killed: it may have committed or not.
          if (!toA || !killed) throw err;
          made--;
        }
      }
    });
    // Kill A mid-way: it has deliveries in flight and leases held.
    await receiver.waitFor(Math.floor((EVENTS * ENDPOINTS) / 4), 120_000);
    killed = true;
    a.child.kill('SIGKILL');
    await a.exited;
    await Promise.all(writers);
    await waitUntil(
      "B to take the killed process's endpoints",
      () => endpointsOf(b.stdout())?.length === ENDPOINTS,
      30_000,
    );

    const store = openShared(t, shared);
    const events = await store.db
      .selectFrom('events')
      .select(['id'])
      .where('type', '=', 'product.created')
      .orderBy('seq')
      .execute();
    // At least one per product; requests A took without answering may have added one or two.
    t.ok(events.length >= EVENTS && events.length <= EVENTS + 4, `${events.length} events`);
    const order = events.map((e) => e.id);

    const byEndpoint = () => {
      const seen = Array.from({ length: ENDPOINTS }, () => [] as string[]);
      for (const req of receiver.requests) {
        const endpoint = Number(new URL(req.path, 'http://x').searchParams.get('endpoint'));
        seen[endpoint]!.push(eventIdOf(req));
      }
      return seen;
    };
    await waitUntil(
      'every event at every endpoint',
      () => byEndpoint().every((ids) => new Set(ids).size === order.length) || undefined,
      180_000,
    );
    let resent = 0;
    for (const [i, ids] of byEndpoint().entries()) {
      // A delivery A had sent when it was killed, unrecorded, goes again (at least once):
      // right after itself, never after a later one.
      const firsts = ids.filter((id, k) => k === 0 || ids[k - 1] !== id);
      resent += ids.length - firsts.length;
      t.same(firsts, order, `endpoint ${i}: every event once, in event order`);
    }
    t.comment(`sent twice after the kill: ${resent}`);
    if (resent > ENDPOINTS) {
      // Which deliveries went twice, where in each endpoint's stream, and what was recorded of
      // their attempts: a kill's resend has one attempt, a retried failure more.
      for (const [i, ids] of byEndpoint().entries()) {
        const twice = ids.flatMap((id, k) => (k > 0 && ids[k - 1] === id ? [`${id}@${k}`] : []));
        if (twice.length > 0)
          t.comment(`endpoint ${i} (${endpoints[i]}): twice ${twice.join(', ')}`);
      }
      const attempts = await store.db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.seq', 'a.delivery_seq')
        .select([
          'd.webhook_id',
          'd.event_id',
          'a.attempt',
          'a.trigger',
          'a.status_code',
          'a.error',
        ])
        .where('a.attempt', '>', 1)
        .execute();
      t.comment(`attempts after a first: ${JSON.stringify(attempts)}`);
      // What the surviving process logged above info (a lane's error, a lease it could not renew).
      const warned = b
        .stdout()
        .split('\n')
        .filter((line) => /"level":(4|5|6)\d/.test(line));
      t.comment(`B logged above info:\n${warned.join('\n')}`);
    }
    t.ok(
      resent <= ENDPOINTS,
      `only deliveries in flight in the killed process went twice (${resent}, at most one per endpoint)`,
    );
    const deliveries = await store.db
      .selectFrom('webhook_deliveries')
      .select(({ fn }) => ['status', fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    t.same(
      deliveries.map((d) => [d.status, Number(d.n)]),
      [['succeeded', order.length * ENDPOINTS]],
      'every delivery recorded as succeeded, none left pending',
    );
    const leased = await store.db
      .selectFrom('webhook_deliveries')
      .select('seq')
      .where('lease_owner', 'is not', null)
      .execute();
    t.same(leased, [], 'no lease left behind');
  },
);
