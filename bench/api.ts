/**
 * API benchmark (issue: foundation): GET /v1/products/:id (random ids, 50 connections) and
 * GET /v1/products?limit=250 (10 connections) on a store of 1,000,000 synthetic products, each
 * round beside a bare Koa hello-world measured back to back. Ratios are per round, then the median.
 */
import path from 'node:path';
import type { Benchmark } from './registry.js';
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
} from './support.js';

const N = Number(process.env.BENCH_API_PRODUCTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

export async function prepareStore(
  name: string,
  count: number,
): Promise<{ env: Record<string, string>; key: string }> {
  const dir = scratchDir(name);
  // Fixed public addresses: the servers listen on free ports, and the published output must
  // not look stale to them (a changed FEEDS_URL would make serve republish at start).
  const env = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    BASE_URL: 'http://localhost:8080',
    FEEDS_URL: 'http://localhost:8081',
    LOG_LEVEL: 'warn',
  };
  const started = performance.now();
  runCli(['seed', '--synthetic', String(count)], env);
  console.log(`seeded ${fmt(count)} products in ${fmt((performance.now() - started) / 1000, 1)} s`);
  // Publish once, so the server measured is not running its start-up pipeline run meanwhile.
  const built = performance.now();
  runCli(['build'], env);
  console.log(
    `published feeds and the registry in ${fmt((performance.now() - built) / 1000, 1)} s`,
  );
  // Overrides far above any rate this machine reaches keep 429s out of the figures (the
  // scale plan alone allows 33,333 requests in 10 seconds, which a fast run exceeds).
  const key = runCli(
    [
      'keys',
      'create',
      '--level',
      'read_only',
      '--plan',
      'scale',
      '--rpm',
      '10000000',
      '--burst',
      '20000000',
      '--name',
      'bench',
    ],
    env,
  ).trim();
  return { env, key };
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

async function run(): Promise<void> {
  const { env, key } = await prepareStore('api', N);
  const server = await startAgentshelf(env);
  const koa = await startKoaHello();
  const apiUrl = server.match[1]!;
  const koaUrl = koa.match[1]!;
  const auth = { Authorization: `Bearer ${key}` };
  const randomId = `request = function()
  return wrk.format("GET", string.format("/v1/products/syn_%08d", math.random(0, ${N - 1})))
end`;
  try {
    // Warm both servers (JIT, page cache) before measuring.
    await load({
      url: `${apiUrl}/v1/products/syn_00000001`,
      connections: 10,
      seconds: 2,
      headers: auth,
      lua: randomId,
    });
    await load({ url: koaUrl, connections: 10, seconds: 2 });
    const byId: { api: number; koa: number; p99: number; koaP99: number; errors: number }[] = [];
    const page: { rps: number; p99: number; errors: number }[] = [];
    let tool = '';
    for (let round = 0; round < ROUNDS; round++) {
      const api = await load({
        url: `${apiUrl}/v1/products/syn_00000001`,
        connections: 50,
        seconds: SECONDS,
        headers: auth,
        lua: randomId,
      });
      const hello = await load({ url: koaUrl, connections: 50, seconds: SECONDS });
      const list = await load({
        url: `${apiUrl}/v1/products?limit=250`,
        connections: 10,
        seconds: SECONDS,
        headers: auth,
      });
      tool = api.tool;
      byId.push({
        api: api.rps,
        koa: hello.rps,
        p99: api.p99ms,
        koaP99: hello.p99ms,
        errors: api.errors,
      });
      page.push({ rps: list.rps, p99: list.p99ms, errors: list.errors });
      console.log(
        `round ${round + 1}: by-id ${fmt(api.rps)} req/s (p99 ${fmt(api.p99ms, 1)} ms), koa hello ${fmt(hello.rps)} req/s, ratio ${fmt(api.rps / hello.rps, 2)}; page of 250 ${fmt(list.rps)} req/s (p99 ${fmt(list.p99ms, 1)} ms)`,
      );
    }
    const ratio = median(byId.map((r) => r.api / r.koa));
    const byIdP99 = median(byId.map((r) => r.p99));
    const pageRps = median(page.map((r) => r.rps));
    const pageP99 = median(page.map((r) => r.p99));
    console.log(
      `\n${fmt(N)} products, ${ROUNDS} rounds of ${SECONDS} s, load by ${tool}; medians (ratios per round):\n`,
    );
    table(
      ['what', 'req/s', 'p99 ms', 'baseline req/s', 'ratio', 'target', 'verdict'],
      [
        [
          'GET /v1/products/:id, 50 conn',
          fmt(median(byId.map((r) => r.api))),
          fmt(byIdP99, 1),
          `${fmt(median(byId.map((r) => r.koa)))} (bare Koa hello)`,
          fmt(ratio, 2),
          '>= 0.40, p99 < 20 ms',
          verdict(ratio >= 0.4 && byIdP99 < 20),
        ],
        [
          'GET /v1/products?limit=250, 10 conn',
          fmt(pageRps),
          fmt(pageP99, 1),
          '-',
          '-',
          '>= 400 req/s, p99 < 50 ms',
          verdict(pageRps >= 400 && pageP99 < 50),
        ],
      ],
    );
    const errors = byId.reduce((a, r) => a + r.errors, 0) + page.reduce((a, r) => a + r.errors, 0);
    if (errors) console.log(`\nWARNING: ${errors} errors or non-2xx responses during the runs`);
    console.log(
      `\nagentshelf peak RSS ${server.peakRssMb()} MB; Koa hello peak RSS ${koa.peakRssMb()} MB`,
    );
  } finally {
    await server.stop();
    await koa.stop();
  }
}

export const apiBenchmark: Benchmark = {
  title: 'platform API on 1,000,000 products vs a bare Koa hello-world',
  run,
};
