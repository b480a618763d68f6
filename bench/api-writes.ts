/**
 * API writes on PostgreSQL, one `serve` process against two on the same database (issue 25:
 * no global write lock, so a second process should add throughput; target two >= 1.5x one),
 * with one process on SQLite as the baseline of the same run. The load: 10 connections, each
 * creating a product by client id then updating it (status and category moving), spread over
 * the processes in turn. BENCH_API_WRITES (default 4,000 writes per column) picks the size.
 */
import path from 'node:path';
import { startPgCluster, type PgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import {
  fmt,
  runCli,
  scratchDir,
  startAgentshelf,
  table,
  unlimitedKey,
  verdict,
} from './support.js';

const CONNECTIONS = 10;
const STATUSES = ['active', 'draft', 'inactive'];
const CATEGORIES = ['Apparel > Shoes', 'Apparel > Hats', 'Garden'];

/** Writes `total` times over `urls` with CONNECTIONS at once; writes per second. */
async function drive(urls: string[], key: string, total: number): Promise<number> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let next = 0;
  const write = async (n: number) => {
    const url = urls[n % urls.length]!;
    const id = `w-${Math.floor(n / 2)}`;
    const res =
      n % 2 === 0
        ? await fetch(`${url}/v1/products`, {
            method: 'POST',
            headers,
            body: JSON.stringify({
              id,
              name: `Write ${n}`,
              price: 10,
              category: CATEGORIES[n % 3],
            }),
          })
        : await fetch(`${url}/v1/products/${id}`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ status: STATUSES[n % 3], category: CATEGORIES[(n + 1) % 3] }),
          });
    await res.arrayBuffer();
    if (res.status !== 201 && res.status !== 200) throw new Error(`write ${n}: ${res.status}`);
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      // A connection writes its create, then its update, so the update finds the product.
      for (let n = next; n < total; n = next) {
        next += 2;
        await write(n);
        await write(n + 1);
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

/** Starts `processes` serves on one store, drives the load, stops them. */
async function column(dir: string, processes: number, total: number, databaseUrl?: string) {
  const env: Record<string, string> = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    FEEDS_DEBOUNCE_MS: '3600000',
    FEEDS_CRON: '0 0 1 1 *',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  runCli(['migrate'], env);
  const key = unlimitedKey(env, 'read_write', 'api-writes bench');
  const servers = [];
  for (let i = 0; i < processes; i++) servers.push(await startAgentshelf(env));
  try {
    return await drive(
      servers.map((s) => s.match[1]!),
      key,
      total,
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

export const apiWritesBenchmark: Benchmark = {
  title: `API writes (create then update by client id, ${CONNECTIONS} connections): PostgreSQL, two serve processes against one; SQLite, one`,
  async run() {
    const total = Number(process.env.BENCH_API_WRITES ?? 4_000);
    const root = scratchDir('api-writes');
    let cluster: PgCluster | undefined;
    try {
      const sqlite = await column(path.join(root, 'sqlite'), 1, total);
      cluster = await startPgCluster();
      const rates: number[] = [];
      for (const processes of [1, 2]) {
        await cluster.admin(`create database writes_${processes}`);
        const url = cluster.url(`writes_${processes}`);
        rates.push(await column(path.join(root, `pg-${processes}`), processes, total, url));
      }
      const [one, two] = rates as [number, number];
      table(
        ['store', 'serve processes', 'writes', 'writes/s', 'ratio'],
        [
          ['SQLite', 1, fmt(total), fmt(sqlite), '-'],
          ['PostgreSQL', 1, fmt(total), fmt(one), `${fmt(one / sqlite, 2)}x SQLite`],
          [
            'PostgreSQL',
            2,
            fmt(total),
            fmt(two),
            `${fmt(two / one, 2)}x one process (target >= 1.5x: ${verdict(two / one >= 1.5)})`,
          ],
        ],
      );
    } finally {
      cluster?.destroy();
    }
  },
};
