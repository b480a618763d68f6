/**
 * `node build/bench/run.js analytics` (issue 13, Speed): (a) every analytics endpoint for a
 * 30-day and a 365-day period at 10 connections, p99 against 50 ms, on a store of
 * BENCH_ANALYTICS_INTERACTIONS interactions (default 10,000,000) over
 * BENCH_ANALYTICS_PRODUCTS products (default 1,000,000) and 365 days, written through the
 * analytics store (raw rows and rollups); (b) the discovery server's req/s with request
 * recording on and off, rounds back to back in the same run, and the requests stored against
 * the requests the load tool reports served. BENCH_SECONDS shortens each load. BENCH_ANALYTICS_LIVE=1
 * measures the endpoints again while the discovery server records about 100 agent requests a
 * second (as on a live server: the traffic rollups change every second).
 */
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import type { InteractionKind, NewInteractionRow } from '../src/db/schema.js';
import { storedTimestamp } from '../src/db/timestamps.js';
import { storeInteractions } from '../src/domain/analytics/interactions.js';
import { startDiscoveryServer } from '../src/http/discovery/server.js';
import { prepareStore } from './api.js';
import type { Benchmark } from './benchmark.js';
import { cpuSecondsOf, fmt, load, median, startAgentshelf, table, verdict } from './support.js';

const PRODUCTS = Number(process.env.BENCH_ANALYTICS_PRODUCTS ?? 1_000_000);
const INTERACTIONS = Number(process.env.BENCH_ANALYTICS_INTERACTIONS ?? 10_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DAYS = 365;
const DAY_MS = 86_400_000;

const AGENTS: [agent: string | null, operator: string | null, kind: InteractionKind][] = [
  ['GPTBot', 'OpenAI', 'training'],
  ['ClaudeBot', 'Anthropic', 'training'],
  ['CCBot', 'Common Crawl', 'training'],
  ['OAI-SearchBot', 'OpenAI', 'search'],
  ['PerplexityBot', 'Perplexity', 'search'],
  ['ChatGPT-User', 'OpenAI', 'assistant'],
  ['Claude-User', 'Anthropic', 'assistant'],
  ['Perplexity-User', 'Perplexity', 'assistant'],
  ['shopping-agent.example', null, 'agent'],
  ['Googlebot', null, 'bot'],
  [null, null, 'human'],
];

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes the interactions through the analytics store, 10,000 a transaction. */
async function fill(env: Record<string, string>, brands: number): Promise<void> {
  const store = openStore(loadConfig(env));
  const present = await store.db
    .selectFrom('interactions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  if (process.env.BENCH_REUSE_STORE === '1' && Number(present?.n ?? 0) > 0) {
    console.log(`reusing ${fmt(Number(present!.n))} interactions (BENCH_REUSE_STORE=1)`);
    await store.close();
    return;
  }
  const random = prng(2026);
  const end = Date.UTC(
    new Date().getUTCFullYear(),
    new Date().getUTCMonth(),
    new Date().getUTCDate(),
  );
  const start = end - (DAYS - 1) * DAY_MS;
  const started = performance.now();
  try {
    for (let written = 0; written < INTERACTIONS;) {
      const rows: NewInteractionRow[] = [];
      const n = Math.min(10_000, INTERACTIONS - written);
      for (let i = 0; i < n; i++) {
        // In time order, as a live server records them (a day's rollup rows sit together).
        const at = storedTimestamp(
          start + Math.floor(((written + i + random()) / INTERACTIONS) * DAYS * DAY_MS),
        );
        const [agent, operator, kind] = AGENTS[Math.floor(random() * AGENTS.length)]!;
        if (random() < 0.65) {
          const brand = `brand-${String(Math.floor(random() * brands)).padStart(4, '0')}`;
          rows.push({
            at,
            source: 'server',
            method: 'GET',
            path: `/v1/feeds/${brand}/products.json`,
            brand,
            status: random() < 0.2 ? 304 : 200,
            bytes: 20_000,
            user_agent: agent,
            agent,
            operator,
            kind,
          });
        } else {
          const r = random();
          const type = r < 0.7 ? 'view' : r < 0.92 ? 'click' : 'conversion';
          const ai = kind === 'bot' || kind === 'human' ? AGENTS[5]! : [agent, operator, kind];
          rows.push({
            at,
            source: 'event',
            product_id: `syn_${String(Math.floor(random() * PRODUCTS)).padStart(8, '0')}`,
            agent: ai[0],
            operator: ai[1],
            kind: ai[2] as InteractionKind,
            event_type: type,
            ...(type === 'conversion'
              ? {
                  amount_minor: 1000 + Math.floor(random() * 20_000),
                  currency: random() < 0.9 ? 'USD' : 'EUR',
                }
              : {}),
          });
        }
      }
      await storeInteractions(store.db, rows, { currency: 'USD' });
      written += n;
      if (process.stderr.isTTY) {
        const rate = written / ((performance.now() - started) / 1000);
        process.stderr.write(
          `\r  ${fmt(written)} / ${fmt(INTERACTIONS)} interactions, ${fmt(rate)}/s   `,
        );
      }
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    const counts = await Promise.all(
      (
        ['analytics_daily_traffic', 'analytics_daily_products', 'analytics_daily_revenue'] as const
      ).map(
        async (t) =>
          [
            t,
            Number(
              (
                await store.db
                  .selectFrom(t)
                  .select((eb) => eb.fn.countAll<number>().as('n'))
                  .executeTakeFirst()
              )?.n ?? 0,
            ),
          ] as const,
      ),
    );
    console.log(
      `wrote ${fmt(INTERACTIONS)} interactions over ${DAYS} days in ${fmt((performance.now() - started) / 1000, 1)} s (${fmt((INTERACTIONS * 1000) / (performance.now() - started))}/s); rollup rows: ${counts.map(([t, n]) => `${t} ${fmt(n)}`).join(', ')}`,
    );
  } finally {
    await store.close();
  }
}

/**
 * 10 connections, each asking again as soon as it has its answer, for `seconds` (and at
 * least until each has had 3 answers): every latency is kept, however long, so a slow
 * endpoint shows its real p99 instead of a load generator's timeouts.
 */
async function measure(
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<{ rps: number; p50: number; p99: number; errors: number; seconds: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let n = 0; performance.now() < until || n < 3; n++) {
        const t0 = performance.now();
        try {
          const res = await fetch(url, { headers });
          await res.arrayBuffer();
          latencies.push(performance.now() - t0);
          if (res.status !== 200) errors++;
        } catch {
          // A kept-alive connection the server closed meanwhile: counted, asked again.
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!;
  const elapsed = (performance.now() - started) / 1000;
  return {
    rps: latencies.length / elapsed,
    seconds: elapsed,
    p50: at(0.5),
    p99: at(0.99),
    errors,
  };
}

function period(days: number): string {
  const end = new Date();
  const start = new Date(end.getTime() - (days - 1) * DAY_MS);
  return `start_date=${start.toISOString().slice(0, 10)}&end_date=${end.toISOString().slice(0, 10)}`;
}

/**
 * About `perSecond` discovery requests a second from AI agents to the server's discovery tree,
 * until stopped: the recorder then writes a batch, and bumps the traffic rollups' change
 * version, every second, as on a live server.
 */
function discoveryTraffic(discoveryUrl: string, perSecond: number): { stop(): Promise<number> } {
  const agents = ['GPTBot/1.1', 'ClaudeBot/1.0', 'ChatGPT-User/1.0'];
  let running = true;
  let sent = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await Promise.all(
        Array.from({ length: perSecond / 10 }, (_, i) =>
          fetch(
            `${discoveryUrl}/v1/feeds/brand-${String(i % 100).padStart(4, '0')}/products.json`,
            {
              headers: { 'User-Agent': `Mozilla/5.0 (compatible; ${agents[i % agents.length]})` },
            },
          )
            .then((r) => r.arrayBuffer())
            .catch(() => undefined),
        ),
      );
      sent += perSecond / 10;
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return sent;
    },
  };
}

async function endpoints(env: Record<string, string>, key: string): Promise<void> {
  const server = await startAgentshelf({
    ...env,
    AUDIT_LOG: 'off',
    RATE_LIMITS: 'off',
    DISCOVERY_LIMIT_PER_MINUTE: '1000000000',
    DISCOVERY_LIMIT_PER_HOUR: '1000000000',
    DISCOVERY_LIMIT_PER_DAY: '1000000000',
  });
  const url = server.match[1]!;
  const headers = { Authorization: `Bearer ${key}` };
  const paths = [
    '/v1/analytics',
    '/v1/analytics/products',
    '/v1/analytics/products?sort=revenue',
    '/v1/analytics/ai-interactions',
    '/v1/analytics/conversions',
  ];
  const rows: (string | number)[][] = [];
  try {
    for (const days of [30, 365]) {
      for (const p of paths) {
        const target = `${url}${p}${p.includes('?') ? '&' : '?'}${period(days)}`;
        // The first answer of a period is computed from the rollups; the next ones are kept
        // until the rollups change (domain/analytics/answer-cache.ts). Parts shared with an
        // endpoint measured before (the daily series) are already kept.
        const t0 = performance.now();
        await (await fetch(target, { headers })).arrayBuffer();
        const first = performance.now() - t0;
        await measure(target, headers, 1);
        const cpu0 = cpuSecondsOf(server.pid);
        const r = await measure(target, headers, SECONDS);
        // Server CPU per answer: the figure other processes on a shared machine disturb least.
        const cpuUs = ((cpuSecondsOf(server.pid) - cpu0) * 1e6) / (r.rps * r.seconds);
        rows.push([
          `${days} days`,
          p,
          fmt(first, 0),
          fmt(r.rps, 1),
          fmt(r.p50, 1),
          fmt(r.p99, 1),
          fmt(cpuUs),
          r.errors,
          verdict(r.errors === 0 && r.p99 < 50),
        ]);
      }
    }
    table(
      [
        'period',
        'endpoint',
        'first ms',
        'req/s',
        'p50 ms',
        'p99 ms',
        'server CPU us/req',
        'errors',
        'p99 < 50 ms',
      ],
      rows,
    );
    // BENCH_ANALYTICS_LIVE=1: the same while the discovery server records agents' requests
    // (answers that read the traffic rollups are computed again every second).
    if (process.env.BENCH_ANALYTICS_LIVE === '1') {
      await new Promise((r) => setTimeout(r, 200));
      const discovery = /discovery registry: (http:\/\/\S+)\/v1\/index\.json/.exec(
        server.output(),
      )?.[1];
      if (!discovery) throw new Error('serve did not print the discovery registry address');
      const traffic = discoveryTraffic(discovery, 100);
      const live: (string | number)[][] = [];
      try {
        for (const days of [30, 365]) {
          for (const p of paths) {
            const target = `${url}${p}${p.includes('?') ? '&' : '?'}${period(days)}`;
            await measure(target, headers, 1);
            const r = await measure(target, headers, SECONDS);
            live.push([
              `${days} days`,
              p,
              fmt(r.rps, 1),
              fmt(r.p50, 1),
              fmt(r.p99, 1),
              r.errors,
              verdict(r.errors === 0 && r.p99 < 50),
            ]);
          }
        }
      } finally {
        console.log(`with discovery traffic recorded (${fmt(await traffic.stop())} requests):`);
      }
      table(['period', 'endpoint', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'p99 < 50 ms'], live);
    }
  } finally {
    await server.stop();
  }
}

async function recording(env: Record<string, string>): Promise<void> {
  const config = loadConfig({
    ...env,
    DISCOVERY_LIMIT_PER_MINUTE: '1000000000',
    DISCOVERY_LIMIT_PER_HOUR: '1000000000',
    DISCOVERY_LIMIT_PER_DAY: '1000000000',
  });
  const store = openStore(config);
  const logger = pino({ level: 'silent' });
  const count = async () =>
    Number(
      (
        await store.db
          .selectFrom('interactions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirst()
      )?.n ?? 0,
    );
  const on = await startDiscoveryServer({ config, db: store.db, logger, port: 0 });
  const off = await startDiscoveryServer({
    config,
    db: store.db,
    logger,
    port: 0,
    recordRequests: false,
  });
  const target = '/v1/feeds/brand-0001/products.json';
  const ratios: number[] = [];
  const rows: (string | number)[][] = [];
  let served = 0;
  try {
    await load({ url: `${on.url}${target}`, connections: 50, seconds: 1 });
    await load({ url: `${off.url}${target}`, connections: 50, seconds: 1 });
    await on.flushRequests();
    const before = await count();
    const storedBefore = on.recorded().stored;
    for (let round = 0; round < ROUNDS; round++) {
      const a = await load({ url: `${off.url}${target}`, connections: 50, seconds: SECONDS });
      const b = await load({ url: `${on.url}${target}`, connections: 50, seconds: SECONDS });
      served += b.served;
      ratios.push(b.rps / a.rps);
      rows.push([round + 1, fmt(a.rps), fmt(b.rps), (b.rps / a.rps).toFixed(3)]);
    }
    // Requests still open when the load stops are answered (and recorded) after it counts them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await on.flushRequests();
    const stored = (await count()) - before;
    table(['round', 'recording off req/s', 'recording on req/s', 'on / off'], rows);
    const cost = 1 - median(ratios);
    console.log(
      `recording costs ${(cost * 100).toFixed(1)}% of req/s (median of ${ROUNDS} rounds; target <= 10%): ${verdict(cost <= 0.1)}`,
    );
    console.log(
      `served (load tool) ${fmt(served)}, stored ${fmt(stored)} (recorder: ${fmt(on.recorded().stored - storedBefore)} written, ${fmt(on.recorded().dropped)} dropped): ${verdict(stored >= served)}`,
    );
  } finally {
    await on.close();
    await off.close();
    await store.close();
  }
}

async function run(): Promise<void> {
  const brands = Math.min(1000, Math.max(1, Math.round(PRODUCTS / 1000)));
  console.log(
    `${fmt(INTERACTIONS)} interactions over ${fmt(PRODUCTS)} products (${brands} brands) and ${DAYS} days; ${SECONDS} s loads`,
  );
  const { env, key } = await prepareStore('analytics', PRODUCTS);
  await fill(env, brands);
  await endpoints(env, key);
  await recording(env);
}

export const analyticsBenchmark: Benchmark = {
  title: 'analytics endpoints (p99 at 10 connections) and the cost of recording discovery requests',
  run,
};
