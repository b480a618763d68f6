/**
 * `node build/bench/run.js ucp`: the UCP catalog (issue 23) over a synthetic catalogue
 * (BENCH_UCP_N, default 1,000,000 products), on SQLite and on PostgreSQL (a local cluster;
 * BENCH_POSTGRES=0 skips it), each figure beside a baseline measured in the same run:
 * (a) search and lookup of 10 ids through `serve`'s discovery server, 10 connections
 *     (autocannon), p99 against the targets (search < 50 ms, lookup < 10 ms); MCP search
 *     against REST search, same calls (target MCP within 1.2x);
 * (b) product writes with the search index kept in step against the same writes on a store
 *     whose index is dropped (BENCH_UCP_WRITES products each, default 20,000; target >= 0.85);
 * (c) the discovery build with the files agents look for, against the same build less the
 *     time those files took (target within 1.05x).
 * BENCH_UCP_SECONDS sets each load's length (default 10).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import autocannon from 'autocannon';
import { publishDiscovery } from '../pipeline/discovery/index.js';
import { publishAgentFiles } from '../pipeline/discovery/agent-files.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openStore, type Store } from '../src/db/store.js';
import { createProducts } from '../src/domain/products/products.js';
import { ProductCreate } from '../src/domain/products/schemas.js';
import { FsPublisher } from '../src/publish/fs.js';
import { freePort } from '../test/support/nginx.js';
import { postgresBin, startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import {
  fmt,
  median,
  pgClusterCpuSeconds,
  ROOT,
  runCli,
  scratchDir,
  startAgentshelf,
  verdict,
  waitIdle,
} from './support.js';

const N = Number(process.env.BENCH_UCP_N ?? 1_000_000);
const WRITES = Number(process.env.BENCH_UCP_WRITES ?? 20_000);
const SECONDS = Number(process.env.BENCH_UCP_SECONDS ?? 10);
const CONNECTIONS = 10;

/**
 * What shoppers' agents would ask of the synthetic catalogue. Selective: a product's number,
 * a brand's code with a category word (a few to a few hundred matches). Broad: category words
 * that most of the catalogue holds (ranked among the best 10,000 matches).
 */
function searchBodies(n: number, kind: 'selective' | 'broad'): object[] {
  if (kind === 'broad') {
    return ['running shoes', 'whole bean coffee', 'desk lamps', 'earbuds', 'backpacks'].map(
      (query) => ({ query }),
    );
  }
  const bodies: object[] = [];
  for (let i = 0; i < 50; i++) {
    bodies.push({ query: String(Math.floor((i * 7919) % n)).padStart(8, '0') });
    bodies.push({ query: `${String(i % 1000).padStart(4, '0')} lamps`, pagination: { limit: 10 } });
  }
  return bodies;
}

function lookupBodies(n: number): object[] {
  return Array.from({ length: 100 }, (_, r) => ({
    ids: Array.from(
      { length: 10 },
      (_, i) => `syn_${String(((r * 10 + i) * 104_729) % n).padStart(8, '0')}`,
    ),
  }));
}

const asMcp = (body: object, i: number) => ({
  jsonrpc: '2.0',
  id: i,
  method: 'tools/call',
  params: {
    name: 'search_catalog',
    arguments: {
      meta: { 'ucp-agent': { profile: 'https://bench.example/agent.json' } },
      catalog: body,
    },
  },
});

async function post(
  url: string,
  bodies: object[],
): Promise<{ rps: number; p99: number; errors: number }> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        setupRequest: (request: Record<string, unknown>) => ({
          ...request,
          headers: {
            'content-type': 'application/json',
            'ucp-agent': 'profile="https://bench.example/agent.json"',
          },
          body: JSON.stringify(bodies[i++ % bodies.length]),
        }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

/** (a): serve over the seeded store; REST search, lookup, MCP search. */
async function measureCalls(env: Record<string, string>, label: string): Promise<void> {
  const feedsPort = await freePort();
  const server = await startAgentshelf({
    ...env,
    FEEDS_PORT: String(feedsPort),
    DISCOVERY_LIMIT_PER_MINUTE: '1000000000',
    DISCOVERY_LIMIT_PER_HOUR: '1000000000',
    DISCOVERY_LIMIT_PER_DAY: '1000000000',
  });
  try {
    const base = `http://127.0.0.1:${feedsPort}`;
    const selective = searchBodies(N, 'selective');
    await post(`${base}/ucp/catalog/search`, selective.slice(0, 5)); // warm
    // Each load starts on an idle machine: the broad searches leave queued work behind them
    // (the server answers requests whose clients left; PostgreSQL runs their queries on).
    const waited: number[] = [];
    const idle = async () => void waited.push(await waitIdle());
    await idle();
    const rest = await post(`${base}/ucp/catalog/search`, selective);
    await idle();
    const broad = await post(`${base}/ucp/catalog/search`, searchBodies(N, 'broad'));
    await idle();
    const lookup = await post(`${base}/ucp/catalog/lookup`, lookupBodies(N));
    await idle();
    const mcp = await post(`${base}/ucp/mcp`, selective.map(asMcp));
    console.log(
      `${label} (before the loads, waited for an idle machine: ${waited.join(', ')} ms):`,
    );
    console.log(
      `  search (REST), selective words: ${fmt(rest.rps)} req/s, p99 ${fmt(rest.p99)} ms (target < 50 ms: ${verdict(rest.p99 < 50)}), errors ${rest.errors}`,
    );
    console.log(
      `  search (REST), words most products hold: ${fmt(broad.rps)} req/s, p99 ${fmt(broad.p99)} ms (target < 50 ms: ${verdict(broad.p99 < 50)}), errors ${broad.errors}`,
    );
    console.log(
      `  lookup of 10 ids: ${fmt(lookup.rps)} req/s, p99 ${fmt(lookup.p99)} ms (target < 10 ms: ${verdict(lookup.p99 < 10)}), errors ${lookup.errors}`,
    );
    const ratio = rest.rps / mcp.rps;
    console.log(
      `  search (MCP), selective words: ${fmt(mcp.rps)} req/s, p99 ${fmt(mcp.p99)} ms; REST / MCP throughput = ${fmt(ratio, 2)} (target <= 1.2: ${verdict(ratio <= 1.2)}), errors ${mcp.errors}`,
    );
  } finally {
    await server.stop();
  }
}

/** Products for the write measure: like the sync writes them, 100 a transaction. */
function writeInputs(prefix: string, count = WRITES) {
  return Array.from({ length: count }, (_, i) =>
    ProductCreate.parse({
      id: `${prefix}${i}`,
      name: `Trail lamp ${i} waterproof`,
      description: `A sturdy lamp for the trail, number ${i}, with a long description of what it does.`,
      price: 10 + (i % 90),
      category: 'Home > Lighting > Desk Lamps',
      attributes: { brand: `Brand ${i % 50}` },
    }),
  );
}

/** Products written into each store before the measured writes (see measureWrites). */
const WARM_WRITES = 1_000;

/** The CPU time (ms) the store's server has used so far: PostgreSQL's processes; none for SQLite. */
type ServerCpu = () => number;

function pgServerCpu(cluster: PgCluster): ServerCpu {
  return () => pgClusterCpuSeconds(cluster.dir) * 1000;
}

interface WriteRate {
  perSecond: number;
  /** CPU time per product, µs: this process (the app) and the store's server. */
  appCpuUs: number;
  serverCpuUs: number;
}

async function timeWrites(store: Store, prefix: string, serverCpu?: ServerCpu): Promise<WriteRate> {
  const inputs = writeInputs(prefix);
  const cpu0 = process.cpuUsage();
  const server0 = serverCpu?.() ?? 0;
  const t0 = performance.now();
  for (let i = 0; i < inputs.length; i += 100) {
    await createProducts(store.db, inputs.slice(i, i + 100), { currency: 'USD' });
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    perSecond: inputs.length / (ms / 1000),
    appCpuUs: (cpu.user + cpu.system) / inputs.length,
    serverCpuUs: (((serverCpu?.() ?? 0) - server0) * 1000) / inputs.length,
  };
}

/**
 * Drops the search index: SQLite's triggers (the FTS table stays, unread), PostgreSQL's
 * generated search_vector column (its GIN index goes with it).
 */
async function dropSearchIndex(store: Store): Promise<void> {
  if (store.location.dialect === 'sqlite') {
    for (const name of ['insert', 'update', 'delete']) {
      await sql.raw(`drop trigger product_search_${name}`).execute(store.db);
    }
  } else await sql`alter table products drop column search_vector`.execute(store.db);
}

/**
 * (b): the same writes on two fresh stores, one without the search index, in alternating
 * rounds. Each store first takes WARM_WRITES products and (PostgreSQL) an ANALYZE, unmeasured:
 * on a table without statistics PostgreSQL estimates its rows from its width and size, and
 * looked the 100 ids of a batch up by a sequential scan until the table passed a size that
 * depends on the row's width: the store without search_vector (narrower rows) scanned through
 * all 20,000 writes (221 scans, 2M rows read) and the one with it switched to the primary key
 * early, so the baseline ran 4x slower than the store with the index and the ratio read 4.14.
 */
async function measureWrites(
  env: (name: string) => Promise<Record<string, string>>,
  label: string,
  serverCpu?: ServerCpu,
) {
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 0; round < 3; round++) {
    const rates: Partial<Record<'with' | 'without', WriteRate>> = {};
    for (const kind of round % 2 === 0
      ? (['with', 'without'] as const)
      : (['without', 'with'] as const)) {
      const store = openStore(loadConfig(await env(`writes-${round}-${kind}`)));
      try {
        await migrateToLatest(store.db);
        if (kind === 'without') await dropSearchIndex(store);
        const warm = writeInputs(`warm${round}_`, WARM_WRITES);
        for (let i = 0; i < warm.length; i += 100) {
          await createProducts(store.db, warm.slice(i, i + 100), { currency: 'USD' });
        }
        if (store.location.dialect === 'postgres') await sql`analyze products`.execute(store.db);
        rates[kind] = await timeWrites(store, `w${round}_`, serverCpu);
      } finally {
        await store.close();
      }
    }
    const { with: on, without: off } = rates as Record<'with' | 'without', WriteRate>;
    ratios.push(on.perSecond / off.perSecond);
    const cpu = (r: WriteRate) => r.appCpuUs + r.serverCpuUs;
    cpuRatios.push(cpu(off) / cpu(on));
    const cpuText = (r: WriteRate) =>
      serverCpu
        ? `CPU ${fmt(cpu(r))} µs a product (app ${fmt(r.appCpuUs)}, server ${fmt(r.serverCpuUs)})`
        : `CPU ${fmt(cpu(r))} µs a product`;
    console.log(
      `  round ${round + 1} (load ${os.loadavg()[0]!.toFixed(2)}): with the index ${fmt(on.perSecond)} products/s, ${cpuText(on)}; without ${fmt(off.perSecond)} products/s, ${cpuText(off)}`,
    );
  }
  const ratio = median(ratios);
  console.log(
    `${label}: writes with / without the search index = ${fmt(ratio, 2)} (target >= 0.85: ${verdict(ratio >= 0.85)}); by CPU time (without / with) ${fmt(median(cpuRatios), 2)}`,
  );
}

/** (c): the discovery build, and the part of it the agent files took. */
async function measurePipeline(env: Record<string, string>, label: string): Promise<void> {
  const config = loadConfig(env);
  const store = openStore(config);
  const reader = store.openReader();
  try {
    const ctx = {
      db: store.db,
      reader,
      config,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
    };
    fs.rmSync(config.PUBLIC_DIR, { recursive: true, force: true });
    let t0 = performance.now();
    await publishDiscovery(ctx);
    const fullMs = performance.now() - t0;
    const index = JSON.parse(
      fs.readFileSync(path.join(config.PUBLIC_DIR, 'v1/index.json'), 'utf8'),
    ) as {
      brands: {
        name: string;
        product_count: number;
        updated_at: string;
        html_url: string;
        feeds: { json: string; ndjson: string };
      }[];
    };
    fs.rmSync(path.join(config.PUBLIC_DIR, 'llms.txt'));
    fs.rmSync(path.join(config.PUBLIC_DIR, 'sitemap.xml'));
    t0 = performance.now();
    const publisher = new FsPublisher(config.PUBLIC_DIR);
    await publishAgentFiles(publisher, {
      feedsUrl: config.FEEDS_URL,
      storeName: config.STORE_NAME,
      brands: index.brands,
    });
    await publisher.commit();
    const agentMs = performance.now() - t0;
    const ratio = fullMs / (fullMs - agentMs);
    console.log(
      `${label}: discovery build ${fmt(fullMs / 1000, 2)} s, of which the agent files ${fmt(agentMs, 1)} ms: with / without = ${fmt(ratio, 3)} (target <= 1.05: ${verdict(ratio <= 1.05)})`,
    );
  } finally {
    await reader.destroy();
    await store.close();
  }
}

/** BENCH_UCP_PARTS: which of (a), (b), (c) to run (default all: `abc`). */
const PARTS = process.env.BENCH_UCP_PARTS ?? 'abc';

async function runOn(
  label: string,
  env: Record<string, string>,
  writeEnv: (name: string) => Promise<Record<string, string>>,
  reuse: boolean,
  serverCpu?: ServerCpu,
) {
  if (!PARTS.includes('a') && !PARTS.includes('c')) {
    // (b) writes into stores of its own: the catalogue is not needed.
    console.log(`\n${label}:`);
  } else if (reuse) {
    console.log(`\n${label}: reusing the store in ${env.DATA_DIR} (BENCH_REUSE_STORE=1)`);
    runCli(['migrate'], env);
  } else {
    console.log(`\n${label}: seeding ${fmt(N)} synthetic products...`);
    runCli(['seed', '--synthetic', String(N)], env);
    // Published before serve starts: a stale tree would have serve build it while measured.
    runCli(['build'], env);
  }
  if (PARTS.includes('a')) await measureCalls(env, `(a) ${label}`);
  if (PARTS.includes('b')) await measureWrites(writeEnv, `(b) ${label}`, serverCpu);
  if (PARTS.includes('c')) await measurePipeline(env, `(c) ${label}`);
}

export const ucpBenchmark: Benchmark = {
  title:
    'UCP catalog: search and lookup p99, MCP vs REST, writes with the search index, agent files',
  async run() {
    // BENCH_REUSE_STORE=1 keeps the stores an earlier run seeded and published (a million
    // products take minutes): for iterating on the search, not for the figures of record.
    const published = (name: string) =>
      fs.existsSync(path.join(ROOT, 'bench', '.work', 'ucp', name, 'public', 'v1', 'index.json'));
    const reuse = process.env.BENCH_REUSE_STORE === '1' && published('sqlite');
    const dir = scratchDir('ucp', { keep: reuse });
    // One FEEDS_URL for build and serve: another would have serve rebuild the tree at start.
    const sqliteEnv = (name: string) => ({
      DATA_DIR: path.join(dir, name),
      PUBLIC_DIR: path.join(dir, name, 'public'),
      FEEDS_URL: 'https://feeds.example.com',
      LOG_LEVEL: 'warn',
    });
    await runOn('SQLite', sqliteEnv('sqlite'), async (name) => sqliteEnv(name), reuse);
    if (process.env.BENCH_POSTGRES === '0') return;
    if (!postgresBin()) {
      console.log(
        '\nPostgreSQL skipped: no /usr/lib/postgresql/*/bin (apt-get install postgresql)',
      );
      return;
    }
    let cluster: PgCluster | undefined;
    try {
      cluster = await startPgCluster();
      const pg = cluster;
      const pgEnv = async (name: string) => {
        const database = `bench_${name.replace(/[^a-z0-9]/g, '_')}`;
        await pg.admin(`create database ${database}`);
        return { ...sqliteEnv(`pg-${name}`), DATABASE_URL: pg.url(database, { pool_size: '10' }) };
      };
      await runOn('PostgreSQL', await pgEnv('catalog'), pgEnv, false, pgServerCpu(pg));
    } finally {
      cluster?.destroy();
    }
  },
};
