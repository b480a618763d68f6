/**
 * `node build/bench/run.js store-copy` (issue 14): `agentshelf store copy` of a synthetic
 * catalogue from SQLite to PostgreSQL and back, at two sizes, with the time and the copying
 * process's peak RSS (which must stay flat as the catalogue grows: rows are streamed).
 * STORE_COPY_BENCH_PRODUCTS=100000,1000000 (default) picks the sizes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import { MAIN, fmt, runCli, scratchDir } from './support.js';

interface CopyRun {
  seconds: number;
  peakRssMb: number;
  rows: number;
}

/** Runs `store copy` in a child, sampling its peak RSS (VmHWM) until it exits. */
async function timeCopy(to: string, env: Record<string, string>): Promise<CopyRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, 'store', 'copy', '--to', to, '--json'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  let peakKb = 0;
  const sample = () => {
    try {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
    } catch {
      // exited
    }
  };
  const timer = setInterval(sample, 100);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`store copy exited ${code}: ${out}`);
  const report = JSON.parse(out) as { rows: number };
  return {
    seconds: (performance.now() - started) / 1000,
    peakRssMb: peakKb / 1024,
    rows: report.rows,
  };
}

export const storeCopyBenchmark: Benchmark = {
  title: 'store copy: a synthetic catalogue from SQLite to PostgreSQL and back',
  async run() {
    const sizes = (process.env.STORE_COPY_BENCH_PRODUCTS ?? '100000,1000000')
      .split(',')
      .map(Number);
    let cluster: PgCluster | undefined;
    const rows: string[] = [];
    try {
      cluster = await startPgCluster();
      for (const products of sizes) {
        const dir = scratchDir(`store-copy-${products}`);
        const env = { DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public'), LOG_LEVEL: 'warn' };
        runCli(['seed', '--synthetic', String(products)], env);
        const sqliteMb = fs.statSync(path.join(dir, 'agentshelf.sqlite')).size / 1e6;
        const database = `copy_${products}`;
        await cluster.admin(`create database ${database}`);
        const url = cluster.url(database);
        const there = await timeCopy(url, env);
        console.log(
          `  ${fmt(products)} products to PostgreSQL: ${fmt(there.seconds, 1)} s, peak RSS ${fmt(there.peakRssMb)} MB`,
        );
        const back = await timeCopy(`sqlite:${path.join(dir, 'back', 'agentshelf.sqlite')}`, {
          DATA_DIR: path.join(dir, 'pg'),
          DATABASE_URL: url,
          LOG_LEVEL: 'warn',
        });
        console.log(
          `  ${fmt(products)} products back to SQLite: ${fmt(back.seconds, 1)} s, peak RSS ${fmt(back.peakRssMb)} MB`,
        );
        rows.push(
          `| ${fmt(products)} | ${fmt(there.rows)} | ${fmt(sqliteMb)} MB | ${fmt(there.seconds, 1)} s (${fmt(there.rows / there.seconds)} rows/s) | ${fmt(there.peakRssMb)} MB | ${fmt(back.seconds, 1)} s (${fmt(back.rows / back.seconds)} rows/s) | ${fmt(back.peakRssMb)} MB |`,
        );
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      cluster?.destroy();
    }
    console.log('');
    console.log(
      '| products | rows (all tables) | SQLite file | SQLite -> PostgreSQL | peak RSS | PostgreSQL -> SQLite | peak RSS |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log(
      '\ntime: the whole command (both stores migrated, one snapshot, one target transaction, counts verified); peak RSS: VmHWM of the copying process.',
    );
  },
};
