/**
 * Dashboard benchmark (issue 15): every dashboard page at 10 connections on a large store
 * (BENCH_DASHBOARD_PRODUCTS, default 1,000,000 synthetic products), signed in with an admin
 * session: p99 latency and the page's weight (HTML plus the stylesheet and the script, before
 * compression). Targets: p99 < 100 ms, weight < 100 KB.
 */
import type { Benchmark } from './benchmark.js';
import { prepareStore } from './api.js';
import { fmt, load, runCli, startAgentshelf, table, verdict } from './support.js';

const N = Number(process.env.BENCH_DASHBOARD_PRODUCTS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

const PAGES = [
  '/dashboard/products',
  `/dashboard/products?offset=${Math.floor(N / 2)}&limit=50`,
  '/dashboard/products?status=active&category=Apparel',
  // One brand of the synthetic 1,000: about 1,000 products at a million.
  '/dashboard/products?brand=Brand%200007',
  '/dashboard/products/syn_00000001',
  '/dashboard/products/new',
  '/dashboard/feeds',
  '/dashboard/integrations',
  '/dashboard/webhooks',
  '/dashboard/analytics',
  '/dashboard/discovery',
  '/dashboard/settings/api-keys',
];

/** A GET, tried again once: the server may close an idle keep-alive socket undici reuses. */
async function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  try {
    return await fetch(url, { headers });
  } catch {
    return fetch(url, { headers });
  }
}

async function run(): Promise<void> {
  const { env } = await prepareStore('dashboard', N);
  const admin = runCli(
    ['keys', 'create', '--level', 'admin', '--rpm', '10000000', '--burst', '20000000'],
    env,
  ).trim();
  const server = await startAgentshelf(env);
  const url = server.match[1]!;
  try {
    const signIn = await fetch(`${url}/dashboard/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: admin }).toString(),
      redirect: 'manual',
    });
    if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const headers = { cookie };
    const rows: (string | number)[][] = [];
    let allOk = true;
    for (const page of PAGES) {
      const res = await get(url + page, headers);
      const html = await res.text();
      if (res.status !== 200) throw new Error(`${page} answered ${res.status}`);
      let weight = Buffer.byteLength(html);
      for (const m of html.matchAll(/(?:href|src)="(\/dashboard\/static\/[^"]+)"/g)) {
        weight += Buffer.byteLength(await (await get(url + m[1]!)).text());
      }
      await load({ url: url + page, connections: 10, seconds: 2, headers });
      const r = await load({
        url: url + page,
        connections: 10,
        seconds: SECONDS,
        headers,
        pid: server.pid,
      });
      const ok = r.p99ms < 100 && weight < 100_000 && r.errors === 0;
      allOk &&= ok;
      rows.push([
        page,
        fmt(r.rps),
        fmt(r.p99ms, 1),
        `${fmt(r.cpuUs! / 1000, 2)} ms`,
        `${fmt(weight / 1024, 1)} KB`,
        'p99 < 100 ms, < 100 KB',
        verdict(ok),
      ]);
      console.log(`${page}: ${fmt(r.rps)} req/s, p99 ${fmt(r.p99ms, 1)} ms, ${fmt(weight)} bytes`);
    }
    console.log(
      `\n${fmt(N)} products, 10 connections, ${SECONDS} s per page, load by autocannon or wrk.\n`,
    );
    table(['page', 'req/s', 'p99 ms', 'CPU/request', 'weight', 'target', 'verdict'], rows);
    console.log(allOk ? '\nevery page within its targets' : '\nsome pages miss their targets');
  } finally {
    await server.stop();
  }
}

export const dashboardBenchmark: Benchmark = {
  title: 'Dashboard: every page at 10 connections on a large store (p99 < 100 ms, < 100 KB)',
  run,
};
