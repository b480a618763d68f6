/**
 * API benchmark (issue: foundation; targets of issue 26): GET /v1/products/:id (random ids,
 * 50 connections) and GET /v1/products?limit=250 (10 connections) on a store of 1,000,000
 * synthetic products, each round beside its floor, a bare Koa route doing the same read on the
 * same file, and a bare Koa hello-world for reference, measured back to back. Ratios are per
 * round, then the median.
 */
import fs from 'node:fs';
import path from 'node:path';
import { postgresBin, startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import {
  fmt,
  load,
  median,
  runCli,
  scratchDir,
  startAgentshelf,
  startChild,
  table,
  verdict,
  ROOT,
  type LoadResult,
  unlimitedKey,
} from './support.js';

const N = Number(process.env.BENCH_API_PRODUCTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

export async function prepareStore(
  name: string,
  count: number,
  /** More settings (DATABASE_URL: the same catalogue on PostgreSQL). */
  extra: Record<string, string> = {},
): Promise<{ env: Record<string, string>; key: string; dir: string }> {
  // BENCH_REUSE_STORE=1 keeps a store an earlier run prepared (seeding and publishing a
  // million products take minutes): for iterating on the servers, not for the figures of record.
  const reuse =
    process.env.BENCH_REUSE_STORE === '1' &&
    fs.existsSync(path.join(ROOT, 'bench', '.work', name, 'public', 'v1', 'index.json'));
  const dir = scratchDir(name, { keep: reuse });
  // Fixed public addresses: the servers listen on free ports, and the published output must
  // not look stale to them (a changed FEEDS_URL would make serve republish at start).
  const env = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    BASE_URL: 'http://localhost:8080',
    FEEDS_URL: 'http://localhost:8081',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  if (reuse) {
    console.log(`reusing the store in ${dir} (BENCH_REUSE_STORE=1)`);
  } else {
    const started = performance.now();
    runCli(['seed', '--synthetic', String(count)], env);
    console.log(
      `seeded ${fmt(count)} products in ${fmt((performance.now() - started) / 1000, 1)} s`,
    );
    // Publish once, so the server measured is not running its start-up pipeline run meanwhile.
    const built = performance.now();
    runCli(['build'], env);
    console.log(
      `published feeds and the registry in ${fmt((performance.now() - built) / 1000, 1)} s`,
    );
  }
  // Overrides far above any rate this machine reaches keep 429s out of the figures (the
  // scale plan alone allows 33,333 requests in 10 seconds, which a fast run exceeds).
  const key = unlimitedKey(env, 'read_only', 'bench');
  return { env, key, dir };
}

export async function startKoaHello() {
  return startChild(
    process.execPath,
    [path.join(ROOT, 'build', 'bench', 'servers', 'koa-hello.js')],
    {
      ready: /listening on (http:\/\/\S+)/,
    },
  );
}

/** The floor: a bare Koa route doing the same reads on the same file (bench/servers/koa-route.ts). */
export async function startKoaRoute(storeFile: string) {
  return startChild(
    process.execPath,
    [path.join(ROOT, 'build', 'bench', 'servers', 'koa-route.js'), storeFile],
    { ready: /listening on (http:\/\/\S+)/ },
  );
}

interface Round {
  byId: LoadResult;
  hello: LoadResult;
  floorById: LoadResult;
  page: LoadResult;
  floorPage: LoadResult;
}

async function run(): Promise<void> {
  const { env, key, dir } = await prepareStore('api', N);
  const server = await startAgentshelf(env);
  const koa = await startKoaHello();
  const floor = await startKoaRoute(path.join(dir, 'agentshelf.sqlite'));
  const apiUrl = server.match[1]!;
  const auth = { Authorization: `Bearer ${key}` };
  const randomIds = { prefix: '/v1/products/syn_', digits: 8, count: N };
  const byId = (url: string, pid: number, seconds = SECONDS, headers?: Record<string, string>) =>
    load({
      url: `${url}/v1/products/syn_00000001`,
      connections: 50,
      seconds,
      randomIds,
      pid,
      ...(headers ? { headers } : {}),
    });
  const page = (url: string, pid: number, seconds = SECONDS, headers?: Record<string, string>) =>
    load({
      url: `${url}/v1/products?limit=250`,
      connections: 10,
      seconds,
      pid,
      ...(headers ? { headers } : {}),
    });
  try {
    // Warm every server (JIT, page cache) before measuring.
    await byId(apiUrl, server.pid, 3, auth);
    await byId(floor.match[1]!, floor.pid, 3);
    await page(apiUrl, server.pid, 2, auth);
    await page(floor.match[1]!, floor.pid, 2);
    await load({ url: koa.match[1]!, connections: 10, seconds: 2 });
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const r: Round = {
        byId: await byId(apiUrl, server.pid, SECONDS, auth),
        hello: await load({
          url: koa.match[1]!,
          connections: 50,
          seconds: SECONDS,
          pid: koa.pid,
        }),
        floorById: await byId(floor.match[1]!, floor.pid),
        page: await page(apiUrl, server.pid, SECONDS, auth),
        floorPage: await page(floor.match[1]!, floor.pid),
      };
      rounds.push(r);
      console.log(
        `round ${round + 1}: by-id ${fmt(r.byId.rps)} req/s (p99 ${fmt(r.byId.p99ms, 1)} ms, ${fmt(r.byId.cpuUs!)} us CPU), Koa hello ${fmt(r.hello.rps)} (${fmt(r.hello.cpuUs!)} us), bare Koa route ${fmt(r.floorById.rps)} (${fmt(r.floorById.cpuUs!)} us); page of 250 ${fmt(r.page.rps)} req/s (p99 ${fmt(r.page.p99ms, 1)} ms, ${fmt(r.page.cpuUs! / 1000, 2)} ms CPU), bare ${fmt(r.floorPage.rps)} (${fmt(r.floorPage.cpuUs! / 1000, 2)} ms)`,
      );
    }
    summarise(rounds);
    const errors = rounds.reduce(
      (a, r) => a + r.byId.errors + r.page.errors + r.floorById.errors + r.floorPage.errors,
      0,
    );
    if (errors) console.log(`\nWARNING: ${errors} errors or non-2xx responses during the runs`);
    console.log(
      `\nagentshelf peak RSS ${server.peakRssMb()} MB; Koa hello ${koa.peakRssMb()} MB; bare Koa route ${floor.peakRssMb()} MB`,
    );
    await postgresColumn(apiUrl, server.pid, auth, byId, page);
  } finally {
    await server.stop();
    await koa.stop();
    await floor.stop();
  }
}

/**
 * The SQLite table: each measure against its floor, the bare Koa route doing the same read in
 * the same round (issue 26's targets); Koa hello stays as a reference line. Ratios are per
 * round, then the median. CPU per request is the figure a shared machine disturbs least.
 */
function summarise(rounds: Round[]): void {
  const med = (f: (r: Round) => number) => median(rounds.map(f));
  const byIdRatio = med((r) => r.byId.rps / r.floorById.rps);
  const byIdCpu = med((r) => r.byId.cpuUs! / r.floorById.cpuUs!);
  const byIdP99 = med((r) => r.byId.p99ms);
  const pageRatio = med((r) => r.page.rps / r.floorPage.rps);
  const pageCpu = med((r) => r.page.cpuUs! / r.floorPage.cpuUs!);
  const us = (f: (r: Round) => number) => `${fmt(med(f))} us`;
  const ms = (f: (r: Round) => number) => `${fmt(med(f) / 1000, 2)} ms`;
  console.log(
    `\n${fmt(N)} products, ${ROUNDS} rounds of ${SECONDS} s, load by ${rounds[0]!.byId.tool}; medians, ratios per round. CPU is the server's own time per request; the floor is the bare Koa route doing the same read (bench/servers/koa-route.ts).\n`,
  );
  table(
    ['what', 'req/s', 'p99 ms', 'CPU/request', 'vs the floor: req/s, CPU', 'target', 'verdict'],
    [
      [
        'GET /v1/products/:id, 50 conn',
        fmt(med((r) => r.byId.rps)),
        fmt(byIdP99, 1),
        us((r) => r.byId.cpuUs!),
        `${fmt(byIdRatio, 2)}x, ${fmt(byIdCpu, 2)}x`,
        '>= 0.80x, CPU <= 1.25x, p99 < 10 ms',
        verdict(byIdRatio >= 0.8 && byIdCpu <= 1.25 && byIdP99 < 10),
      ],
      [
        '(floor) bare Koa route by id',
        fmt(med((r) => r.floorById.rps)),
        fmt(
          med((r) => r.floorById.p99ms),
          1,
        ),
        us((r) => r.floorById.cpuUs!),
        '-',
        '-',
        '-',
      ],
      [
        '(reference) bare Koa hello',
        fmt(med((r) => r.hello.rps)),
        fmt(
          med((r) => r.hello.p99ms),
          1,
        ),
        us((r) => r.hello.cpuUs!),
        '-',
        '-',
        '-',
      ],
      [
        'GET /v1/products?limit=250, 10 conn',
        fmt(med((r) => r.page.rps)),
        fmt(
          med((r) => r.page.p99ms),
          1,
        ),
        ms((r) => r.page.cpuUs!),
        `${fmt(pageRatio, 2)}x, ${fmt(pageCpu, 2)}x`,
        '>= 1.00x',
        verdict(pageRatio >= 1.0),
      ],
      [
        '(floor) bare Koa route, page of 250',
        fmt(med((r) => r.floorPage.rps)),
        fmt(
          med((r) => r.floorPage.p99ms),
          1,
        ),
        ms((r) => r.floorPage.cpuUs!),
        '-',
        '-',
        '-',
      ],
    ],
  );
}

type Load = (
  url: string,
  pid: number,
  seconds?: number,
  headers?: Record<string, string>,
) => Promise<LoadResult>;

/**
 * The same catalogue on PostgreSQL (a cluster on this machine, started as the test support
 * does), measured in rounds beside the SQLite server still running: ratios per round.
 * BENCH_POSTGRES=0 skips it; without Debian's postgresql it is skipped with a note.
 */
async function postgresColumn(
  sqliteUrl: string,
  sqlitePid: number,
  sqliteAuth: Record<string, string>,
  byId: Load,
  page: Load,
): Promise<void> {
  if (process.env.BENCH_POSTGRES === '0') return;
  if (!postgresBin()) {
    console.log(
      '\nPostgreSQL column skipped: no /usr/lib/postgresql/*/bin (apt-get install postgresql)',
    );
    return;
  }
  let cluster: PgCluster | undefined;
  let pgServer: Awaited<ReturnType<typeof startAgentshelf>> | undefined;
  try {
    cluster = await startPgCluster();
    await cluster.admin('create database bench_api');
    console.log(`\nPostgreSQL: the same ${fmt(N)} products on a local cluster (pool_size=10)`);
    // A new cluster each run: never reuse (BENCH_REUSE_STORE) a directory of an earlier one.
    fs.rmSync(path.join(ROOT, 'bench', '.work', 'api-postgres'), { recursive: true, force: true });
    const { env, key } = await prepareStore('api-postgres', N, {
      DATABASE_URL: cluster.url('bench_api', { pool_size: '10' }),
    });
    pgServer = await startAgentshelf(env);
    const pgUrl = pgServer.match[1]!;
    const pgAuth = { Authorization: `Bearer ${key}` };
    await byId(pgUrl, pgServer.pid, 3, pgAuth);
    await page(pgUrl, pgServer.pid, 2, pgAuth);
    const rounds: { sById: LoadResult; pById: LoadResult; sPage: LoadResult; pPage: LoadResult }[] =
      [];
    for (let round = 0; round < ROUNDS; round++) {
      const r = {
        sById: await byId(sqliteUrl, sqlitePid, SECONDS, sqliteAuth),
        pById: await byId(pgUrl, pgServer.pid, SECONDS, pgAuth),
        sPage: await page(sqliteUrl, sqlitePid, SECONDS, sqliteAuth),
        pPage: await page(pgUrl, pgServer.pid, SECONDS, pgAuth),
      };
      rounds.push(r);
      console.log(
        `round ${round + 1}: by-id SQLite ${fmt(r.sById.rps)} / PostgreSQL ${fmt(r.pById.rps)} req/s (p99 ${fmt(r.pById.p99ms, 1)} ms); page of 250 SQLite ${fmt(r.sPage.rps)} / PostgreSQL ${fmt(r.pPage.rps)} req/s (p99 ${fmt(r.pPage.p99ms, 1)} ms)`,
      );
    }
    const med = (f: (r: (typeof rounds)[number]) => number) => median(rounds.map(f));
    const byIdRatio = med((r) => r.pById.rps / r.sById.rps);
    const byIdP99 = med((r) => r.pById.p99ms);
    const pageRatio = med((r) => r.pPage.rps / r.sPage.rps);
    console.log('');
    table(
      [
        'what',
        'SQLite req/s',
        'PostgreSQL req/s',
        'PostgreSQL p99 ms',
        'ratio',
        'target',
        'verdict',
      ],
      [
        [
          'GET /v1/products/:id, 50 conn',
          fmt(med((r) => r.sById.rps)),
          fmt(med((r) => r.pById.rps)),
          fmt(byIdP99, 1),
          fmt(byIdRatio, 2),
          '>= 0.50, p99 < 20 ms',
          verdict(byIdRatio >= 0.5 && byIdP99 < 20),
        ],
        [
          'GET /v1/products?limit=250, 10 conn',
          fmt(med((r) => r.sPage.rps)),
          fmt(med((r) => r.pPage.rps)),
          fmt(
            med((r) => r.pPage.p99ms),
            1,
          ),
          fmt(pageRatio, 2),
          '>= 0.70',
          verdict(pageRatio >= 0.7),
        ],
      ],
    );
    const errors = rounds.reduce((a, r) => a + r.pById.errors + r.pPage.errors, 0);
    if (errors) console.log(`\nWARNING: ${errors} errors or non-2xx responses on PostgreSQL`);
    console.log(`agentshelf on PostgreSQL: peak RSS ${pgServer.peakRssMb()} MB`);
  } finally {
    await pgServer?.stop();
    cluster?.destroy();
  }
}

export const apiBenchmark: Benchmark = {
  title: 'platform API on 1,000,000 products vs the bare Koa route doing the same reads',
  run,
};
