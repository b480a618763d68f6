/**
 * `node build/bench/run.js sync`: the first sync and an unchanged re-sync of a JSONL feed of
 * N products (OpenAI flat-feed columns, a quarter of them variants of a group) served by a
 * local HTTP server, each run by `agentshelf integrations sync ID --json` in a child process,
 * beside a floor measured in the same run (bench/sync-floor.ts: parse the same feed and
 * insert with one prepared statement per 500-row transaction). The feed carries no ETag, so
 * the re-sync reads and compares every item.
 * Targets (issue 12): first sync at 0.5x the floor or better; the re-sync 5x faster than the
 * first; peak RSS at the largest size within 1.3x of the smallest.
 * SYNC_BENCH_SIZES=10000,100000 (default) picks the sizes.
 *
 * Then, on PostgreSQL (issue 25: two integrations syncing at once finish in 0.7x the time of
 * running them one after the other or less): two feed integrations of SYNC_BENCH_PG_SIZE
 * products each (50,000; distinct SKUs), first synced one after the other, then, on a fresh
 * database, both at once, each sync a CLI child as above; the figure is the wall time of the
 * pair. SYNC_BENCH_POSTGRES=0 leaves it out.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createIntegration } from '../src/domain/integrations/integrations.js';
import { SecretBox } from '../src/domain/integrations/secret-box.js';
import { platformSources } from '../src/platforms/index.js';
import { startPgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';
import { busyShareBetween, machineTicks } from './support.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const FLOOR = path.join(HERE, 'sync-floor.js');
const WORK = path.join(HERE, '../../bench/.work');
const MB = 1024 * 1024;
const n = (v: number) => Math.round(v).toLocaleString('en');

function writeFeed(file: string, size: number, prefix = 'SKU'): void {
  const fd = fs.openSync(file, 'w');
  let chunk = '';
  for (let i = 1; i <= size; i++) {
    const group = i % 4 === 0 ? { item_group_id: `G${i - (i % 8)}`, size: `S${i % 8}` } : {};
    chunk += `${JSON.stringify({
      id: `${prefix}-${i}`,
      title: `Synthetic product ${i}`,
      description: `Product ${i}, a synthetic item for the sync benchmark.`,
      link: `https://shop.example.com/p/${i}`,
      image_link: `https://shop.example.com/img/${i}.jpg`,
      price: `${10 + (i % 90)}.${String(i % 100).padStart(2, '0')} USD`,
      availability: i % 5 === 0 ? 'out_of_stock' : 'in_stock',
      brand: `Brand ${i % 20}`,
      product_category: `Apparel > Category ${i % 30}`,
      is_eligible_search: 'true',
      ...group,
    })}\n`;
    if (chunk.length > MB) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/** Serves one file, streamed, without validators (every read is a full read). */
async function serveFile(file: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/products.jsonl`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs a child, sampling its peak RSS (VmHWM) until it exits; resolves stdout and the peak. */
function runChild(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let peakKb = 0;
  const sample = setInterval(() => {
    try {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
    } catch {
      // exited
    }
  }, 20);
  return new Promise<{ stdout: string; peakMb: number }>((resolve, reject) => {
    child.once('close', (code) => {
      clearInterval(sample);
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`));
      else resolve({ stdout, peakMb: peakKb / 1024 });
    });
  });
}

/** Migrates the store `config` names and makes a feed integration per URL; their ids. */
async function feedIntegrations(
  config: ReturnType<typeof loadConfig>,
  urls: string[],
): Promise<{ id: string }[]> {
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    const env = {
      db: store.db,
      box: new SecretBox(config),
      sources: platformSources,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
      allowPrivate: true,
      defaultCurrency: 'USD',
    };
    const made = [];
    for (const url of urls) {
      made.push(await createIntegration(env, store.db, { platform: 'feed', settings: { url } }));
    }
    return made;
  } finally {
    await store.close();
  }
}

/**
 * The environment of a sync child: its store (`DATA_DIR`, `DATABASE_URL`) and the bench's knobs
 * (SYNC_BATCH_SIZE; SYNC_BENCH_NODE_OPTIONS: Node flags for the syncs, a heap limit, say).
 */
function syncEnv(store: Record<string, string>, publicDir: string): Record<string, string> {
  return {
    ...store,
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    PUBLIC_DIR: publicDir,
    ...(process.env.SYNC_BATCH_SIZE ? { SYNC_BATCH_SIZE: process.env.SYNC_BATCH_SIZE } : {}),
    ...(process.env.SYNC_BENCH_NODE_OPTIONS
      ? { NODE_OPTIONS: process.env.SYNC_BENCH_NODE_OPTIONS }
      : {}),
  };
}

/**
 * One `integrations sync ID --json` child, which must succeed having read `size` items; its
 * run and peak RSS. SYNC_BENCH_PROFILE=DIR writes a CPU profile of each sync there.
 */
async function syncChild(id: string, size: number, env: Record<string, string>) {
  const profile = process.env.SYNC_BENCH_PROFILE;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const out = await runChild([...flags, CLI, 'integrations', 'sync', id, '--json'], env);
  const run = JSON.parse(out.stdout) as {
    duration_ms: number;
    fetched: number;
    created: number;
    unchanged: number;
    status: string;
  };
  if (run.status !== 'succeeded' || run.fetched !== size) throw new Error(`sync: ${out.stdout}`);
  return { run, rssMb: out.peakMb };
}

/** A first sync: every item created. */
async function firstSync(id: string, size: number, env: Record<string, string>) {
  const synced = await syncChild(id, size, env);
  if (synced.run.created !== size) throw new Error(`first sync created ${synced.run.created}`);
  return synced;
}

/**
 * Two feed integrations on PostgreSQL, synced one after the other, then (on a fresh database)
 * both at once: the wall time of each pair.
 */
async function measureTwoAtOncePg(size: number) {
  const dir = path.join(WORK, `sync-pg-${size}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const files = ['A', 'B'].map((prefix) => {
    const file = path.join(dir, `${prefix}.jsonl`);
    writeFeed(file, size, `SKU-${prefix}`);
    return file;
  });
  const served = await Promise.all(files.map((file) => serveFile(file)));
  const cluster = await startPgCluster();
  try {
    const pair = async (name: string, together: boolean) => {
      await cluster.admin(`create database ${name}`);
      const url = cluster.url(name);
      const config = loadConfig({
        DATA_DIR: path.join(dir, name),
        DATABASE_URL: url,
        ALLOW_PRIVATE_TARGETS: 'true',
      });
      const ids = await feedIntegrations(
        config,
        served.map((s) => s.url),
      );
      const env = syncEnv(
        { DATA_DIR: config.DATA_DIR, DATABASE_URL: url },
        path.join(dir, name, 'public'),
      );
      const ticks = machineTicks();
      const started = performance.now();
      if (together) await Promise.all(ids.map(({ id }) => firstSync(id, size, env)));
      else for (const { id } of ids) await firstSync(id, size, env);
      const ms = performance.now() - started;
      // Busy cores on average: a pair that keeps the machine's cores busy one after the other
      // cannot go faster at once.
      return { ms, cores: busyShareBetween(ticks, machineTicks()) * os.availableParallelism() };
    };
    const apart = await pair('apart', false);
    const together = await pair('together', true);
    return { apart, together };
  } finally {
    cluster.destroy();
    await Promise.all(served.map((s) => s.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Measured {
  size: number;
  floor: { perSecond: number; rssMb: number };
  first: { perSecond: number; ms: number; rssMb: number };
  again: { perSecond: number; ms: number; rssMb: number };
}

async function measure(size: number): Promise<Measured> {
  const dir = path.join(WORK, `sync-${size}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const feedFile = path.join(dir, 'products.jsonl');
  writeFeed(feedFile, size);
  const served = await serveFile(feedFile);
  try {
    // The floor, into a store of its own migrated like the real one.
    const floorConfig = loadConfig({ DATA_DIR: path.join(dir, 'floor') });
    const floorStore = openStore(floorConfig);
    await migrateToLatest(floorStore.db);
    await floorStore.close();
    const floorOut = await runChild([FLOOR, floorConfig.DATABASE_FILE, served.url], {});
    const floor = JSON.parse(floorOut.stdout) as {
      products: number;
      ms: number;
      peak_rss_bytes: number;
    };

    const config = loadConfig({ DATA_DIR: path.join(dir, 'data'), ALLOW_PRIVATE_TARGETS: 'true' });
    const integration = (await feedIntegrations(config, [served.url]))[0]!;
    const env = syncEnv({ DATA_DIR: config.DATA_DIR }, path.join(dir, 'public'));
    const first = await firstSync(integration.id, size, env);
    const again = await syncChild(integration.id, size, env);
    if (again.run.unchanged !== size) throw new Error(`re-sync: ${again.run.unchanged} unchanged`);
    return {
      size,
      floor: { perSecond: (floor.products / floor.ms) * 1000, rssMb: floor.peak_rss_bytes / MB },
      first: {
        perSecond: (size / first.run.duration_ms) * 1000,
        ms: first.run.duration_ms,
        rssMb: first.rssMb,
      },
      again: {
        perSecond: (size / again.run.duration_ms) * 1000,
        ms: again.run.duration_ms,
        rssMb: again.rssMb,
      },
    };
  } finally {
    await served.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const syncBenchmark: Benchmark = {
  title: 'integration sync of a JSONL feed: first sync and unchanged re-sync vs a bare insert loop',
  async run() {
    const sizes = (process.env.SYNC_BENCH_SIZES ?? '10000,100000').split(',').map(Number);
    const results: Measured[] = [];
    for (const size of sizes) {
      const m = await measure(size);
      results.push(m);
      console.log(
        `${n(size)} products: first sync ${n(m.first.perSecond)}/s (${n(m.first.ms)} ms, peak RSS ${n(m.first.rssMb)} MB)` +
          ` vs floor ${n(m.floor.perSecond)}/s (peak RSS ${n(m.floor.rssMb)} MB): ${(m.first.perSecond / m.floor.perSecond).toFixed(2)}x (target >= 0.5x)`,
      );
      console.log(
        `  re-sync, nothing changed: ${n(m.again.perSecond)}/s (${n(m.again.ms)} ms, peak RSS ${n(m.again.rssMb)} MB): ${(m.first.ms / m.again.ms).toFixed(1)}x faster than the first (target >= 5x)`,
      );
    }
    if (results.length > 1) {
      const small = results[0]!;
      const large = results.at(-1)!;
      const rss = (m: Measured) => Math.max(m.first.rssMb, m.again.rssMb);
      console.log(
        `peak RSS ${n(large.size)} vs ${n(small.size)}: ${n(rss(large))} MB vs ${n(rss(small))} MB = ${(rss(large) / rss(small)).toFixed(2)}x (target <= 1.3x)`,
      );
    }
    if (process.env.SYNC_BENCH_POSTGRES !== '0') {
      const size = Number(process.env.SYNC_BENCH_PG_SIZE ?? 50_000);
      const { apart, together } = await measureTwoAtOncePg(size);
      const ratio = together.ms / apart.ms;
      console.log(
        `PostgreSQL, two integrations of ${n(size)} products each: one after the other ${n(apart.ms)} ms, both at once ${n(together.ms)} ms: ${ratio.toFixed(2)}x (target <= 0.7x: ${ratio <= 0.7 ? 'met' : 'MISSED'})`,
      );
      console.log(
        `  busy cores of ${os.availableParallelism()} on average (syncs and PostgreSQL): one after the other ${apart.cores.toFixed(2)}, both at once ${together.cores.toFixed(2)}`,
      );
    }
  },
};
