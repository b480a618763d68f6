/**
 * Limits benchmark (issue 3): GET /v1/products/:id (random ids, 50 connections) with rate
 * limits and the audit log on, beside the same server with RATE_LIMITS=off AUDIT_LOG=off, on
 * one store. The two run back to back in each round, in alternating order; the on/off ratio
 * is taken per round, then the median.
 */
import fs from 'node:fs';
import type { Benchmark } from './benchmark.js';
import { prepareStore } from './api.js';
import {
  fmt,
  load,
  median,
  runCli,
  startAgentshelf,
  table,
  verdict,
  type LoadResult,
} from './support.js';

const N = Number(process.env.BENCH_API_PRODUCTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TARGET = 0.85;
async function run(): Promise<void> {
  const { env, key } = await prepareStore('limits', N);
  const admin = runCli(['keys', 'create', '--level', 'admin', '--name', 'bench admin'], env).trim();
  const on = await startAgentshelf(env);
  const off = await startAgentshelf({ ...env, RATE_LIMITS: 'off', AUDIT_LOG: 'off' });
  const servers = { on: { child: on, url: on.match[1]! }, off: { child: off, url: off.match[1]! } };
  const auth = { Authorization: `Bearer ${key}` };
  const randomIds = { prefix: '/v1/products/syn_', digits: 8, count: N };
  const measure = (url: string, seconds: number, connections = 50, pid?: number) =>
    load({
      url: `${url}/v1/products/syn_00000001`,
      connections,
      seconds,
      headers: auth,
      randomIds,
      ...(pid === undefined ? {} : { pid }),
    });
  try {
    await measure(servers.on.url, 2, 10);
    await measure(servers.off.url, 2, 10);
    const rounds: {
      on: number;
      off: number;
      onP99: number;
      offP99: number;
      onCpuUs: number;
      offCpuUs: number;
      errors: number;
    }[] = [];
    let tool = '';
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      // CPU time per request is the figure other processes on a shared machine disturb least.
      const measured = new Map<'on' | 'off', LoadResult & { cpuUs: number }>();
      for (const which of order) {
        const res = await measure(servers[which].url, SECONDS, 50, servers[which].child.pid);
        measured.set(which, { ...res, cpuUs: res.cpuUs! });
      }
      const result = { on: measured.get('on')!, off: measured.get('off')! };
      tool = result.on.tool;
      rounds.push({
        on: result.on.rps,
        off: result.off.rps,
        onP99: result.on.p99ms,
        offP99: result.off.p99ms,
        onCpuUs: result.on.cpuUs,
        offCpuUs: result.off.cpuUs,
        errors: result.on.errors + result.off.errors,
      });
      console.log(
        `round ${round + 1} (${order.join(' then ')}): on ${fmt(result.on.rps)} req/s (p99 ${fmt(result.on.p99ms, 1)} ms), off ${fmt(result.off.rps)} req/s (p99 ${fmt(result.off.p99ms, 1)} ms), ratio ${fmt(result.on.rps / result.off.rps, 2)}; CPU per request on ${fmt(result.on.cpuUs)} us, off ${fmt(result.off.cpuUs)} us`,
      );
    }
    const ratio = median(rounds.map((r) => r.on / r.off));
    // off/on CPU per request: the req/s ratio a server would show with a core of its own.
    const cpuRatio = median(rounds.map((r) => r.offCpuUs / r.onCpuUs));
    console.log(
      `\n${fmt(N)} products, ${ROUNDS} rounds of ${SECONDS} s, 50 connections, load by ${tool}; medians (ratio per round):\n`,
    );
    table(
      ['what', 'req/s', 'p99 ms', 'baseline req/s', 'ratio', 'target', 'verdict'],
      [
        [
          'GET /v1/products/:id, limits + audit on',
          fmt(median(rounds.map((r) => r.on))),
          fmt(median(rounds.map((r) => r.onP99)), 1),
          `${fmt(median(rounds.map((r) => r.off)))} (same server, RATE_LIMITS=off AUDIT_LOG=off; p99 ${fmt(median(rounds.map((r) => r.offP99)), 1)} ms)`,
          fmt(ratio, 2),
          `>= ${TARGET}`,
          verdict(ratio >= TARGET),
        ],
        [
          'server CPU per request, limits + audit on',
          `${fmt(median(rounds.map((r) => r.onCpuUs)))} us`,
          '-',
          `${fmt(median(rounds.map((r) => r.offCpuUs)))} us (off)`,
          fmt(cpuRatio, 2),
          `>= ${TARGET} (off/on)`,
          verdict(cpuRatio >= TARGET),
        ],
      ],
    );
    const errors = rounds.reduce((a, r) => a + r.errors, 0);
    if (errors)
      console.log(`\nWARNING: ${errors} errors or non-2xx responses (429s?) during the runs`);
    // Proof the "on" server really audited: its entries, read back through the API.
    const res = await fetch(`${servers.on.url}/v1/audit-log?limit=1`, {
      headers: { Authorization: `Bearer ${admin}` },
    });
    const audited = ((await res.json()) as { pagination: { total: number } }).pagination.total;
    console.log(
      `\naudit entries written by the "on" server: ${fmt(audited)}; peak RSS on ${on.peakRssMb()} MB, off ${off.peakRssMb()} MB`,
    );
  } finally {
    await on.stop();
    await off.stop();
    // A million products and the audit rows: about a gigabyte nobody needs after the run,
    // unless the next run is to reuse it.
    if (process.env.BENCH_REUSE_STORE !== '1') {
      fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
    }
  }
}

export const limitsBenchmark: Benchmark = {
  title: 'GET /v1/products/:id with rate limits and the audit log on vs off',
  run,
};
