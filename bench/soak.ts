/**
 * `node build/bench/run.js soak`: one real `agentshelf serve` child under mixed load for
 * SOAK_MINUTES (default 30), all of it on 127.0.0.1 and all of it at once:
 * - API reads and writes: products created (10%), updated by PUT (15%), read by id (50%) and
 *   listed (25%), paced at SOAK_API_RPS (default 40) by SOAK_API_WORKERS loops (default 8,
 *   each waits for its answer: bounded concurrency);
 * - discovery reads: index.json, then one brand's file named in it (SOAK_DISCOVERY_RPS, 10);
 * - analytics: batches of 20 events POSTed to /v1/analytics/events (SOAK_ANALYTICS_RPS, 2);
 * - syncs of a `feed` integration every SOAK_SYNC_EVERY_S (30) from a local JSONL feed of
 *   SOAK_FEED_ITEMS (1,000) products whose content changes every SOAK_FEED_CHANGE_S (60): prices
 *   move, items leave and come back, new ones appear. Some answers are bad on purpose: the 3rd
 *   of every 8 feed requests is an empty body, the 6th is cut in the middle of its last line.
 *   Such a sync may end failed, held or (before issue 20's sync work) succeeded: every outcome
 *   is counted and printed;
 * - webhook deliveries of every event to 2 endpoints of a local receiver that answers 500 to
 *   SOAK_WEBHOOK_FAIL (0.05) of the requests (the retry schedule is shortened to seconds).
 *
 * Then a final good feed is synced and the webhook backlog drained (SOAK_DRAIN_S, 300), and it
 * prints: requests by route and status (every 5xx listed), the serve process's RSS at the
 * start and every 5 minutes (every minute for runs under 15 minutes) with the API p99 of each
 * interval, whether RSS stayed flat (the last reading within 1.2x of the first interval's),
 * whether every event was delivered at least once and in order per endpoint (the receiver's
 * log against GET /v1/webhooks/:id/deliveries, and every product the load created against
 * the product.created events received), and whether any product was lost or doubled (the
 * catalogue against the final feed, and against the products the load created).
 * DATABASE_URL (an empty PostgreSQL database) runs it on PostgreSQL instead of SQLite;
 * SOAK_STORE=postgres starts a PostgreSQL cluster for the run (as the tests do) and uses that.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import {
  fmt,
  runCli,
  scratchDir,
  startChild,
  table,
  verdict,
  MAIN,
  unlimitedKey,
} from './support.js';

const setting = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number, not '${raw}'`);
  }
  return value;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

function p99(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

// --- Requests, counted by route and status ---

class Traffic {
  /** `${group} ${route}` -> status (or `ERR`) -> count. */
  readonly counts = new Map<string, Map<string, number>>();
  readonly errors: string[] = [];
  /** The first few 4xx answers, for the report (the load sends none on purpose). */
  readonly clientErrors: string[] = [];
  /** Latencies of API requests (ms), by reporting interval. */
  readonly apiLatencies: number[][] = [[]];
  readonly allApi: number[] = [];

  count(key: string, status: string): void {
    let byStatus = this.counts.get(key);
    if (!byStatus) this.counts.set(key, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  nextInterval(): void {
    this.apiLatencies.push([]);
  }
}

interface Answer {
  status: number;
  body: unknown;
}

class Client {
  constructor(
    private readonly traffic: Traffic,
    private readonly key: string,
  ) {}

  /** One request; counted under `group route`; API latencies recorded. Never throws. */
  async send(
    group: 'api' | 'discovery' | 'analytics' | 'sync' | 'check',
    route: string,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<Answer | undefined> {
    const started = performance.now();
    const key = `${group} ${method} ${route}`;
    try {
      const res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      const ms = performance.now() - started;
      if (group === 'api') {
        this.traffic.apiLatencies.at(-1)!.push(ms);
        this.traffic.allApi.push(ms);
      }
      this.traffic.count(key, String(res.status));
      if (res.status >= 400 && res.status < 500 && this.traffic.clientErrors.length < 10) {
        this.traffic.clientErrors.push(`${key} -> ${res.status}: ${text.trim().slice(0, 300)}`);
      }
      if (res.status >= 500)
        this.traffic.errors.push(`${key} -> ${res.status}: ${text.trim().slice(0, 300)}`);
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // a brand page or an error that is not JSON: kept as text
      }
      return { status: res.status, body: parsed };
    } catch (err) {
      this.traffic.count(key, 'ERR');
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      this.traffic.errors.push(
        `${key} -> ${String(err)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
      );
      return undefined;
    }
  }
}

// --- The feed: a JSONL catalogue that changes, and sometimes answers badly ---

interface FeedItem {
  price: number;
  present: boolean;
}

class Feed {
  readonly items = new Map<string, FeedItem>();
  version = 0;
  requests = 0;
  readonly served: Record<'good' | 'empty' | 'truncated', number> = {
    good: 0,
    empty: 0,
    truncated: 0,
  };
  /** What the last request was answered. */
  last = 'no';
  /** When set, every answer is the good one (the final sync). */
  alwaysGood = false;
  private body = '';
  private next: number;

  constructor(
    private readonly tag: string,
    size: number,
  ) {
    for (let i = 1; i <= size; i++)
      this.items.set(this.sku(i), { price: this.price(), present: true });
    this.next = size + 1;
    this.render();
  }

  sku(i: number): string {
    return `${this.tag}-${i}`;
  }

  name(sku: string): string {
    return `Soak feed ${sku}`;
  }

  private price(): number {
    return Math.round((5 + Math.random() * 200) * 100) / 100;
  }

  /** A new version: 5% of prices move, 1% of items leave, 1% of the gone come back, 0.5% new. */
  change(): void {
    const all = [...this.items.values()];
    const size = all.length;
    for (let i = 0; i < Math.ceil(size * 0.05); i++) pick(all).price = this.price();
    const present = all.filter((item) => item.present);
    for (let i = 0; i < Math.ceil(size * 0.01); i++) pick(present).present = false;
    const gone = all.filter((item) => !item.present);
    for (let i = 0; i < Math.ceil(size * 0.01) && gone.length; i++) pick(gone).present = true;
    for (let i = 0; i < Math.ceil(size * 0.005); i++) {
      this.items.set(this.sku(this.next++), { price: this.price(), present: true });
    }
    this.version++;
    this.render();
  }

  private render(): void {
    let out = '';
    for (const [sku, item] of this.items) {
      if (!item.present) continue;
      out += `${JSON.stringify({
        id: sku,
        title: this.name(sku),
        description: `${sku}, an item of the soak test's feed.`,
        link: `https://shop.example.com/p/${sku}`,
        image_link: `https://shop.example.com/img/${sku}.jpg`,
        price: `${item.price.toFixed(2)} USD`,
        availability: 'in_stock',
        brand: `Soak Brand ${Number(sku.split('-').at(-1)) % 7}`,
        product_category: 'Apparel > Shoes',
        is_eligible_search: 'true',
        is_eligible_checkout: 'false',
      })}\n`;
    }
    this.body = out;
  }

  /** The answer to the next request: the 3rd of every 8 is empty, the 6th cut mid-line. */
  answer(): string {
    const n = this.alwaysGood ? -1 : this.requests++ % 8;
    if (n === 2) {
      this.served.empty++;
      this.last = 'empty';
      return '';
    }
    if (n === 5) {
      this.served.truncated++;
      this.last = 'truncated';
      const lastLine = this.body.lastIndexOf('\n', this.body.length - 2);
      return this.body.slice(0, lastLine + Math.floor((this.body.length - lastLine) / 2));
    }
    this.served.good++;
    this.last = 'good';
    return this.body;
  }
}

// --- The webhook receiver ---

interface Receipt {
  eventId: string;
  event: string;
  dataId: string | undefined;
  ok: boolean;
}

class Receiver {
  /** Receipts by endpoint index, in arrival order. */
  readonly log: Receipt[][] = [];
  readonly secrets: string[] = [];
  badSignatures = 0;

  constructor(private readonly failRate: number) {}

  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const endpoint = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1]);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const secret = this.secrets[endpoint];
      if (!Number.isInteger(endpoint) || secret === undefined) {
        res.writeHead(404).end();
        return;
      }
      const expected = crypto.createHmac('sha256', secret).update(raw).digest('hex');
      if (req.headers['x-webhook-signature'] !== expected) this.badSignatures++;
      const body = JSON.parse(raw.toString('utf8')) as { event: string; data?: { id?: string } };
      const ok = Math.random() >= this.failRate;
      (this.log[endpoint] ??= []).push({
        eventId: String(req.headers['webhook-id']),
        event: body.event,
        dataId: body.data?.id,
        ok,
      });
      res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'fail');
    });
  }
}

async function listen(
  handler: http.RequestListener,
): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- The run ---

interface Product {
  id: string;
  name: string;
  price: number;
  status: string;
}

interface Delivery {
  event_id: string;
  event: string;
  test: boolean;
  status: string;
}

interface SyncRun {
  id: string;
  status: string;
  fetched: number;
  created: number;
  updated: number;
  deactivated: number;
  failed: number;
  error: string | null;
}

async function run(): Promise<void> {
  // SOAK_STORE=postgres: a PostgreSQL cluster of the machine's binaries, started for the run.
  let cluster: PgCluster | undefined;
  try {
    let databaseUrl = process.env.DATABASE_URL || undefined;
    if (!databaseUrl && process.env.SOAK_STORE === 'postgres') {
      cluster = await startPgCluster();
      await cluster.admin('create database soak');
      databaseUrl = cluster.url('soak');
    }
    await soak(databaseUrl);
  } finally {
    cluster?.stop();
  }
}

async function soak(databaseUrl: string | undefined): Promise<void> {
  const minutes = setting('SOAK_MINUTES', 30);
  const apiRps = setting('SOAK_API_RPS', 40);
  const apiWorkers = Math.round(setting('SOAK_API_WORKERS', 8));
  const discoveryRps = setting('SOAK_DISCOVERY_RPS', 10);
  const analyticsRps = setting('SOAK_ANALYTICS_RPS', 2);
  const syncEveryS = setting('SOAK_SYNC_EVERY_S', 30);
  const feedChangeS = setting('SOAK_FEED_CHANGE_S', 60);
  const feedItems = Math.round(setting('SOAK_FEED_ITEMS', 1000));
  const failRate = Number(process.env.SOAK_WEBHOOK_FAIL ?? 0.05);
  const drainS = setting('SOAK_DRAIN_S', 300);
  const intervalMin = minutes >= 15 ? 5 : 1;
  const tag = `S${Date.now().toString(36)}`;

  const dir = scratchDir('soak');
  const env: Record<string, string> = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    HOST: '127.0.0.1',
    PORT: '0',
    FEEDS_PORT: '0',
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_TARGETS: 'true',
    // Seconds, not minutes to hours: a failed delivery comes back within the run.
    WEBHOOK_RETRY_SCHEDULE: '1,2,5,10,30,60,60,60,60',
    // The discovery load comes from one address; its per-address limits are off.
    DISCOVERY_LIMIT_PER_MINUTE: '0',
    DISCOVERY_LIMIT_PER_HOUR: '0',
    DISCOVERY_LIMIT_PER_DAY: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  runCli(['migrate'], env);
  const key = unlimitedKey(env, 'admin', 'soak');

  const feed = new Feed(tag, feedItems);
  const feedServer = await listen((req, res) => {
    const body = feed.answer();
    res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(body);
  });
  const receiver = new Receiver(failRate);
  const hooks = await listen((req, res) => receiver.handle(req, res));

  const serve = await startChild(process.execPath, [MAIN, 'serve'], {
    env,
    ready:
      /serving the platform API at (http:\/\/\S+)[\s\S]*discovery registry: (http:\/\/\S+)\/v1\/index\.json/,
    timeoutMs: 120_000,
  });
  const api = serve.match[1]!;
  const discovery = serve.match[2]!;
  const traffic = new Traffic();
  const client = new Client(traffic, key);
  const cleanups: (() => Promise<void>)[] = [serve.stop, feedServer.close, hooks.close];
  try {
    console.log(
      `serve pid ${serve.pid} on ${databaseUrl ? 'PostgreSQL' : 'SQLite'}; ${minutes} min; API ${apiRps}/s, discovery ${discoveryRps}/s, analytics ${analyticsRps} batches/s, a sync every ${syncEveryS} s, the feed (${fmt(feedItems)} items) changes every ${feedChangeS} s, webhooks fail ${Math.round(failRate * 100)}%`,
    );

    // Two endpoints for every event kind.
    const webhookIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await client.send('check', '/v1/webhooks', 'POST', `${api}/v1/webhooks`, {
        url: `${hooks.origin}/hook/${i}`,
      });
      const body = res?.body as { id: string; secret: string } | undefined;
      if (res?.status !== 201 || !body)
        throw new Error(`POST /v1/webhooks: ${JSON.stringify(res)}`);
      receiver.secrets[i] = body.secret;
      webhookIds.push(body.id);
    }
    const integration = await client.send(
      'check',
      '/v1/integrations',
      'POST',
      `${api}/v1/integrations`,
      {
        platform: 'feed',
        settings: { url: `${feedServer.origin}/products.jsonl` },
      },
    );
    if (integration?.status !== 201)
      throw new Error(`POST /v1/integrations: ${JSON.stringify(integration)}`);
    const integrationId = (integration.body as { id: string }).id;

    /** `<feed answer> -> <run status>` -> count, and the counts of the first such run. */
    const syncOutcomes = new Map<string, number>();
    const syncExamples = new Map<string, string>();
    /** Starts a sync and waits for its end; undefined when one was running already (409). */
    const syncOnce = async (group: 'sync' | 'check'): Promise<SyncRun | undefined> => {
      feed.last = 'no';
      const started = await client.send(
        group,
        '/v1/integrations/:id/sync',
        'POST',
        `${api}/v1/integrations/${integrationId}/sync`,
        {},
      );
      if (started?.status !== 202) {
        syncOutcomes.set(
          `not started (${started?.status ?? 'ERR'})`,
          (syncOutcomes.get(`not started (${started?.status ?? 'ERR'})`) ?? 0) + 1,
        );
        return undefined;
      }
      const runId = (started.body as { id: string }).id;
      for (;;) {
        await sleep(500);
        const status = await client.send(
          group,
          '/v1/integrations/:id/sync/status',
          'GET',
          `${api}/v1/integrations/${integrationId}/sync/status`,
        );
        const last = (status?.body as { last?: SyncRun } | undefined)?.last;
        if (last?.id === runId && last.status !== 'running') {
          const outcome = `${feed.last} answer -> ${last.status}`;
          syncOutcomes.set(outcome, (syncOutcomes.get(outcome) ?? 0) + 1);
          if (!syncExamples.has(outcome)) {
            syncExamples.set(
              outcome,
              `fetched ${last.fetched}, created ${last.created}, updated ${last.updated}, deactivated ${last.deactivated}, failed ${last.failed}${last.error ? `; ${last.error.slice(0, 200)}` : ''}`,
            );
          }
          return last;
        }
      }
    };
    feed.alwaysGood = true;
    const first = await syncOnce('check');
    feed.alwaysGood = false;
    if (first?.status !== 'succeeded') throw new Error(`the first sync: ${JSON.stringify(first)}`);
    syncOutcomes.clear();
    syncExamples.clear();

    // Known products: the feed's (read once) and those the load creates.
    const feedIds: string[] = [];
    for (let offset = 0; ; offset += 250) {
      const page = await client.send(
        'check',
        '/v1/products',
        'GET',
        `${api}/v1/products?limit=250&offset=${offset}`,
      );
      const products = (page?.body as { products: Product[] }).products;
      feedIds.push(...products.map((p) => p.id));
      if (products.length < 250) break;
    }
    const created: string[] = [];
    /** PUTs answered 200, by product id. */
    const updates = new Map<string, number>();
    let priceChanges = 0;

    const started = performance.now();
    const endAt = started + minutes * 60_000;
    const running = () => performance.now() < endAt;
    /** Runs `op` about `rps` times a second in each of `workers` loops until the end. */
    const paced = (workers: number, rps: number, op: () => Promise<unknown>) =>
      Array.from({ length: workers }, async () => {
        const every = (workers * 1000) / rps;
        await sleep(Math.random() * every);
        while (running()) {
          const t0 = performance.now();
          await op();
          await sleep(Math.max(0, every - (performance.now() - t0)));
        }
      });

    let productTotal = feedIds.length;
    let brandSlugs: string[] = [];
    const apiOp = async () => {
      const r = Math.random();
      if (r < 0.1 || created.length === 0) {
        const res = await client.send('api', '/v1/products', 'POST', `${api}/v1/products`, {
          name: `Soak API product ${created.length}`,
          price: (100 + Math.floor(Math.random() * 10_000)) / 100,
          currency: 'USD',
          category: 'Home > Kitchen',
          attributes: { brand: `Soak API Brand ${created.length % 5}`, features: ['durable'] },
        });
        if (res?.status === 201) created.push((res.body as Product).id);
      } else if (r < 0.25) {
        const id = pick(created);
        const res = await client.send(
          'api',
          '/v1/products/:id',
          'PUT',
          `${api}/v1/products/${id}`,
          // A price no other request sends: every PUT changes the product, so each must make a
          // product.updated (a PUT that changes nothing makes none, and the check would miss it).
          { price: (20_000 + ++priceChanges) / 100 },
        );
        if (res?.status === 200) updates.set(id, (updates.get(id) ?? 0) + 1);
      } else if (r < 0.75) {
        const id = Math.random() < 0.5 ? pick(created) : pick(feedIds);
        await client.send('api', '/v1/products/:id', 'GET', `${api}/v1/products/${id}`);
      } else {
        const offset = Math.floor(Math.random() * Math.max(1, productTotal - 50));
        const res = await client.send(
          'api',
          '/v1/products?limit=50',
          'GET',
          `${api}/v1/products?limit=50&offset=${offset}`,
        );
        const total = (res?.body as { pagination?: { total: number } } | undefined)?.pagination
          ?.total;
        if (total) productTotal = total;
      }
    };
    const discoveryOp = async () => {
      if (brandSlugs.length === 0 || Math.random() < 0.3) {
        const res = await client.send(
          'discovery',
          '/v1/index.json',
          'GET',
          `${discovery}/v1/index.json`,
        );
        const brands = (res?.body as { brands?: { slug: string }[] } | undefined)?.brands;
        if (brands) brandSlugs = brands.map((b) => b.slug);
        return;
      }
      await client.send(
        'discovery',
        '/v1/brands/:slug',
        'GET',
        `${discovery}/v1/brands/${pick(brandSlugs)}`,
      );
    };
    const analyticsOp = async () => {
      const events = Array.from({ length: 20 }, (_, i) => {
        const product_id = Math.random() < 0.5 && created.length ? pick(created) : pick(feedIds);
        const type = i % 10 === 0 ? 'conversion' : i % 3 === 0 ? 'click' : 'view';
        return {
          type,
          product_id,
          agent: pick(['ChatGPT-User', 'Claude-User', 'PerplexityBot', null]),
          ...(type === 'conversion' ? { amount: 19.99, currency: 'USD' } : {}),
        };
      });
      await client.send('analytics', '/v1/analytics/events', 'POST', `${api}/v1/analytics/events`, {
        events,
      });
    };

    const rss: { minute: number; mb: number; requests: number; p99: number }[] = [
      { minute: 0, mb: rssMb(serve.pid), requests: 0, p99: NaN },
    ];
    console.log(`t=0: serve RSS ${fmt(rss[0]!.mb)} MB`);
    const sampler = (async () => {
      for (let i = 1; i * intervalMin <= minutes; i++) {
        const wait = started + i * intervalMin * 60_000 - performance.now();
        await sleep(Math.max(0, wait));
        const latencies = traffic.apiLatencies.at(-1)!;
        traffic.nextInterval();
        const row = {
          minute: i * intervalMin,
          mb: rssMb(serve.pid),
          requests: latencies.length,
          p99: p99(latencies),
        };
        rss.push(row);
        console.log(
          `t=${row.minute} min: serve RSS ${fmt(row.mb)} MB; ${fmt(row.requests)} API requests, p99 ${fmt(row.p99, 1)} ms; syncs ${JSON.stringify(Object.fromEntries(syncOutcomes))}`,
        );
      }
    })();
    const feedChanger = (async () => {
      while (running()) {
        await sleep(Math.min(feedChangeS * 1000, Math.max(0, endAt - performance.now())));
        if (running()) feed.change();
      }
    })();
    const syncer = (async () => {
      while (running()) {
        const t0 = performance.now();
        await syncOnce('sync');
        await sleep(
          Math.min(
            Math.max(0, syncEveryS * 1000 - (performance.now() - t0)),
            Math.max(0, endAt - performance.now()),
          ),
        );
      }
    })();

    await Promise.all([
      ...paced(apiWorkers, apiRps, apiOp),
      ...paced(2, discoveryRps, discoveryOp),
      ...paced(1, analyticsRps, analyticsOp),
      feedChanger,
      syncer,
      sampler,
    ]);
    const loadSeconds = (performance.now() - started) / 1000;

    // --- The end: one good sync, then every delivery out ---
    feed.alwaysGood = true;
    let final = await syncOnce('check');
    while (final === undefined) {
      await sleep(1000);
      final = await syncOnce('check');
    }
    const drainEnd = performance.now() + drainS * 1000;
    let pending = Infinity;
    while (performance.now() < drainEnd) {
      pending = 0;
      for (const id of webhookIds) {
        const res = await client.send(
          'check',
          '/v1/webhooks/:id/deliveries',
          'GET',
          `${api}/v1/webhooks/${id}/deliveries?status=pending&limit=1`,
        );
        pending += (res?.body as { pagination: { total: number } }).pagination.total;
      }
      if (pending === 0) break;
      await sleep(2000);
    }
    const drainedS = (performance.now() - (drainEnd - drainS * 1000)) / 1000;
    const endRss = rssMb(serve.pid);

    // --- Requests ---
    console.log(`\nRequests by route and status (${fmt(loadSeconds)} s of load):`);
    const statuses = [
      ...new Set([...traffic.counts.values()].flatMap((m) => [...m.keys()])),
    ].sort();
    table(
      ['route', ...statuses],
      [...traffic.counts.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([route, m]) => [route, ...statuses.map((s) => fmt(m.get(s) ?? 0))]),
    );
    const fivexx = [...traffic.counts.values()].reduce(
      (sum, m) =>
        sum +
        [...m.entries()]
          .filter(([s]) => s.startsWith('5') || s === 'ERR')
          .reduce((a, [, n]) => a + n, 0),
      0,
    );
    for (const line of traffic.errors.slice(0, 20)) console.log(`  ${line}`);
    if (traffic.errors.length > 20) console.log(`  ... and ${traffic.errors.length - 20} more`);
    for (const line of traffic.clientErrors) console.log(`  4xx: ${line}`);
    console.log(`5xx and transport errors: ${fmt(fivexx)} (target 0): ${verdict(fivexx === 0)}`);

    // --- Syncs ---
    console.log(
      `\nSyncs (the feed answered ${JSON.stringify(feed.served)}; ${feed.version + 1} versions of it):`,
    );
    table(
      ['feed answer -> run', 'runs', 'the first such run'],
      [...syncOutcomes].map(([outcome, n]) => [outcome, n, syncExamples.get(outcome) ?? '']),
    );
    console.log(
      `final sync: ${final.status}, fetched ${final.fetched}, created ${final.created}, updated ${final.updated}, deactivated ${final.deactivated}, failed ${final.failed}`,
    );

    // --- RSS and p99 ---
    console.log(`\nserve RSS and API p99, every ${intervalMin} min:`);
    table(
      ['t (min)', 'RSS (MB)', 'API requests', 'API p99 (ms)'],
      rss.map((r) => [
        r.minute,
        fmt(r.mb),
        fmt(r.requests),
        Number.isNaN(r.p99) ? '-' : fmt(r.p99, 1),
      ]),
    );
    console.log(`after the final sync and the drain: ${fmt(endRss)} MB`);
    const base = rss[1];
    const last = rss.at(-1)!;
    if (base && last !== base) {
      console.log(
        `RSS flat: ${fmt(last.mb)} MB at ${last.minute} min vs ${fmt(base.mb)} MB at ${base.minute} min = ${(last.mb / base.mb).toFixed(2)}x (target <= 1.2x): ${verdict(last.mb <= base.mb * 1.2)}`,
      );
    } else {
      console.log('RSS flat: too short a run for two readings after the start');
    }
    console.log(
      `API p99 over the whole run: ${fmt(p99(traffic.allApi), 1)} ms over ${fmt(traffic.allApi.length)} requests`,
    );

    // --- Webhooks ---
    console.log(`\nWebhooks (drained in ${fmt(drainedS)} s; ${pending} still pending):`);
    const webhookRows: (string | number)[][] = [];
    let webhooksOk = pending === 0;
    for (const [i, id] of webhookIds.entries()) {
      const deliveries: Delivery[] = [];
      for (let offset = 0; ; offset += 250) {
        const res = await client.send(
          'check',
          '/v1/webhooks/:id/deliveries',
          'GET',
          `${api}/v1/webhooks/${id}/deliveries?limit=250&offset=${offset}`,
        );
        const page = (res?.body as { deliveries: Delivery[] }).deliveries;
        deliveries.push(...page);
        if (page.length < 250) break;
      }
      deliveries.reverse(); // newest first -> event order
      const events = deliveries.filter((d) => !d.test);
      const log = receiver.log[i] ?? [];
      const firstOk = new Map<string, number>();
      const received = new Map<string, number>();
      log.forEach((r, n) => {
        if (!r.ok) return;
        received.set(r.eventId, (received.get(r.eventId) ?? 0) + 1);
        if (!firstOk.has(r.eventId)) firstOk.set(r.eventId, n);
      });
      const notSucceeded = events.filter((d) => d.status !== 'succeeded').length;
      const missing = events.filter((d) => !firstOk.has(d.event_id)).length;
      let outOfOrder = 0;
      let previous = -1;
      for (const d of events) {
        const at = firstOk.get(d.event_id);
        if (at === undefined) continue;
        if (at < previous) outOfOrder++;
        previous = Math.max(previous, at);
      }
      const listed = new Set(events.map((d) => d.event_id));
      const unlisted = [...firstOk.keys()].filter((e) => !listed.has(e)).length;
      const duplicates = [...received.values()].filter((n) => n > 1).length;
      const createdSeen = new Set(
        log.filter((r) => r.ok && r.event === 'product.created').map((r) => r.dataId),
      );
      const createdMissing = created.filter((p) => !createdSeen.has(p)).length;
      const updatedSeen = new Map<string, number>();
      for (const r of log) {
        if (r.ok && r.event === 'product.updated' && r.dataId)
          updatedSeen.set(r.dataId, (updatedSeen.get(r.dataId) ?? 0) + 1);
      }
      const updatesMissing = [...updates].filter(([p, n]) => (updatedSeen.get(p) ?? 0) < n).length;
      const ok =
        notSucceeded === 0 &&
        missing === 0 &&
        outOfOrder === 0 &&
        unlisted === 0 &&
        createdMissing === 0 &&
        updatesMissing === 0;
      webhooksOk &&= ok;
      webhookRows.push([
        `#${i + 1}`,
        fmt(events.length),
        fmt(log.length),
        fmt(log.filter((r) => !r.ok).length),
        fmt(notSucceeded),
        fmt(missing),
        fmt(outOfOrder),
        fmt(unlisted),
        fmt(duplicates),
        `${fmt(createdMissing)} / ${fmt(updatesMissing)}`,
      ]);
    }
    table(
      [
        'endpoint',
        'events',
        'requests received',
        'answered 500',
        'not succeeded',
        'never received',
        'out of order',
        'received, not listed',
        'received twice+',
        "load's creates / updates missing",
      ],
      webhookRows,
    );
    if (receiver.badSignatures) console.log(`bad X-Webhook-Signature: ${receiver.badSignatures}`);
    webhooksOk &&= receiver.badSignatures === 0;
    console.log(
      `every event delivered at least once, in order, per endpoint: ${verdict(webhooksOk)}`,
    );

    // --- The catalogue ---
    const products: Product[] = [];
    for (let offset = 0; ; offset += 250) {
      const res = await client.send(
        'check',
        '/v1/products',
        'GET',
        `${api}/v1/products?limit=250&offset=${offset}`,
      );
      const page = (res?.body as { products: Product[] }).products;
      products.push(...page);
      if (page.length < 250) break;
    }
    const byName = new Map<string, Product[]>();
    for (const p of products) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
    let lost = 0;
    let doubled = 0;
    let wrongPrice = 0;
    let wrongStatus = 0;
    for (const [sku, item] of feed.items) {
      const found = byName.get(feed.name(sku)) ?? [];
      if (found.length > 1) doubled++;
      if (found.length === 0) {
        if (item.present) lost++;
        continue;
      }
      const p = found[0]!;
      if (item.present && p.status !== 'active') wrongStatus++;
      if (!item.present && p.status === 'active') wrongStatus++;
      if (item.present && Math.abs(p.price - item.price) > 0.001) wrongPrice++;
    }
    const byId = new Map<string, number>();
    for (const p of products) byId.set(p.id, (byId.get(p.id) ?? 0) + 1);
    const apiLost = created.filter((id) => !byId.has(id)).length;
    const idsTwice = [...byId.values()].filter((n) => n > 1).length;
    const present = [...feed.items.values()].filter((i) => i.present).length;
    console.log(
      `\nCatalogue: ${fmt(products.length)} products listed; the final feed has ${fmt(present)} items (${fmt(feed.items.size - present)} gone from it), the load created ${fmt(created.length)} and updated ${fmt([...updates.values()].reduce((a, b) => a + b, 0))} times`,
    );
    console.log(
      `feed items lost ${lost}, doubled ${doubled}, wrong status ${wrongStatus}, wrong price ${wrongPrice}; the load's products lost ${apiLost}; ids listed twice ${idsTwice}`,
    );
    const catalogueOk = lost + doubled + wrongStatus + wrongPrice + apiLost + idsTwice === 0;
    console.log(`no product lost or doubled: ${verdict(catalogueOk)}`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

export const soakBenchmark: Benchmark = {
  onlyByName: true,
  title:
    'one serve under API, discovery, analytics, sync and webhook load at once (SOAK_MINUTES, default 30)',
  run,
};
