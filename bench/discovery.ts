/**
 * `node build/bench/run.js discovery`: (a) the discovery build over N products (default
 * 1,000,000 over 1,000 brands) and the republish after one product changes; (c) the build
 * against a floor measured in the same run; (b) the embedded discovery server against nginx
 * on the same files with wrk. BENCH_DISCOVERY_N and BENCH_DISCOVERY_SECONDS shorten it.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { nginxConfigPath, publishDiscovery } from '../pipeline/discovery/index.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { startDiscoveryServer } from '../src/http/discovery/server.js';
import { updateProduct } from '../src/domain/products/products.js';
import { freePort, nginxMissing, startNginx } from '../test/support/nginx.js';
import { buildFloor } from './discovery-floor.js';
import type { Benchmark } from './benchmark.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function seconds(ms: number): string {
  return (ms / 1000).toFixed(2);
}

// Asynchronous: the embedded server runs in this process and must keep serving meanwhile.
async function wrk(url: string, duration: number): Promise<{ rps: number; p99: string }> {
  const { stdout: out } = await promisify(execFile)(
    'wrk',
    ['-t1', '-c50', `-d${duration}s`, '--latency', url],
    { encoding: 'utf8' },
  );
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  return { rps, p99 };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function run(): Promise<void> {
  const n = Number(process.env.BENCH_DISCOVERY_N ?? 1_000_000);
  const brands = Math.min(1000, Math.max(1, Math.round(n / 1000)));
  const duration = Number(process.env.BENCH_DISCOVERY_SECONDS ?? 5);
  const work = path.join(repo, 'bench', '.work', 'discovery');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const nginxPort = await freePort();
  const env = {
    DATA_DIR: path.join(work, 'data'),
    PUBLIC_DIR: path.join(work, 'public'),
    FEEDS_URL: 'https://feeds.example.com',
    FEEDS_PORT: String(nginxPort),
    LOG_LEVEL: 'silent',
    // Limits stay on (both servers do the work) but never refuse the load generator.
    DISCOVERY_LIMIT_PER_MINUTE: '1000000000',
    DISCOVERY_LIMIT_PER_HOUR: '1000000000',
    DISCOVERY_LIMIT_PER_DAY: '1000000000',
  };
  const stops: (() => Promise<void>)[] = [];
  try {
    console.log(`seeding ${n.toLocaleString('en')} products over ${brands} brands...`);
    execFileSync(
      process.execPath,
      [
        path.join(repo, 'build/src/main.js'),
        'seed',
        '--synthetic',
        String(n),
        '--brands',
        String(brands),
      ],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const config = loadConfig(env);
    const store = openStore(config);
    stops.push(() => store.close());
    const reader = store.openReader();
    stops.push(() => reader.destroy());
    const ctx = {
      db: store.db,
      reader,
      config,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
    };

    // (c) first, on the same warm database: the floor.
    let t0 = performance.now();
    if (store.location.dialect !== 'sqlite') throw new Error('the discovery floor reads SQLite');
    const floorProducts = await buildFloor(
      store.location.file,
      path.join(work, 'floor'),
      config.FEEDS_URL,
      config.STORE_NAME,
    );
    const floorMs = performance.now() - t0;
    fs.rmSync(path.join(work, 'floor'), { recursive: true, force: true });

    // (a) the full build, then one product changes.
    t0 = performance.now();
    const full = await publishDiscovery(ctx);
    const fullMs = performance.now() - t0;
    const target = await store.db
      .selectFrom('products')
      .select('id')
      .where('status', '=', 'active')
      .limit(1)
      .executeTakeFirstOrThrow();
    await updateProduct(store.db, target.id, { price: 12.34 });
    t0 = performance.now();
    const again = await publishDiscovery(ctx);
    const againMs = performance.now() - t0;
    const rss = process.resourceUsage().maxRSS / 1024;

    console.log('');
    console.log(
      `(a) full build, ${n.toLocaleString('en')} products: ${seconds(fullMs)} s (${Math.round(n / (fullMs / 1000)).toLocaleString('en')} products/s); peak RSS of this process ${rss.toFixed(0)} MB`,
    );
    console.log(`    ${full.summary[0]}`);
    console.log(`    republish after one product changed: ${seconds(againMs)} s (target < 1 s)`);
    console.log(`    ${again.summary[0]}`);
    console.log(
      `(c) floor (bare loop, same per-brand files): ${seconds(floorMs)} s for ${floorProducts.toLocaleString('en')} products`,
    );
    console.log(`    full build / floor = ${(fullMs / floorMs).toFixed(2)} (target <= 2)`);

    // (b) the same files from the embedded server and from nginx.
    const nginxWhy = nginxMissing();
    const haveWrk = !spawnSync('wrk', ['--version']).error;
    if (nginxWhy || !haveWrk) {
      console.log(`(b) skipped: ${nginxWhy ?? 'wrk is not installed (apt-get install -y wrk)'}`);
      return;
    }
    const embedded = await startDiscoveryServer({
      config,
      db: store.db,
      logger: ctx.logger,
      port: 0,
    });
    stops.unshift(() => embedded.close());
    const nginx = await startNginx({
      dir: path.join(work, 'nginx'),
      include: nginxConfigPath(config),
      port: nginxPort,
      accessLog: true,
    });
    stops.unshift(() => nginx.stop());
    const index = JSON.parse(
      fs.readFileSync(path.join(config.PUBLIC_DIR, 'v1/index.json'), 'utf8'),
    ) as {
      brands: { slug: string }[];
    };
    const sized = index.brands
      .map((b) => {
        const file = `v1/feeds/${b.slug}/products.ndjson`;
        return { file, size: fs.statSync(path.join(config.PUBLIC_DIR, file)).size };
      })
      .sort((a, b) => Math.abs(a.size - 1e6) - Math.abs(b.size - 1e6))[0]!;
    const files = [
      {
        file: 'v1/index.json',
        size: fs.statSync(path.join(config.PUBLIC_DIR, 'v1/index.json')).size,
      },
      sized,
    ];
    console.log(
      `(b) wrk -t1 -c50 -d${duration}s, 2 rounds, nginx and embedded alternating (same 2 cores)`,
    );
    for (const f of files) {
      // Warm both (the embedded server loads a file into memory on first use).
      await (await fetch(`${embedded.url}/${f.file}`)).arrayBuffer();
      await (await fetch(`${nginx.url}/${f.file}`)).arrayBuffer();
      const ratios: number[] = [];
      const rows: string[] = [];
      for (let round = 0; round < 2; round++) {
        const ng = await wrk(`${nginx.url}/${f.file}`, duration);
        const em = await wrk(`${embedded.url}/${f.file}`, duration);
        ratios.push(em.rps / ng.rps);
        rows.push(
          `      round ${round + 1}: nginx ${Math.round(ng.rps).toLocaleString('en')} req/s (p99 ${ng.p99}), embedded ${Math.round(em.rps).toLocaleString('en')} req/s (p99 ${em.p99}), ratio ${(em.rps / ng.rps).toFixed(2)}`,
        );
      }
      console.log(
        `    ${f.file} (${(f.size / 1024).toFixed(0)} KiB): embedded / nginx = ${median(ratios).toFixed(2)} (target >= 0.40)`,
      );
      for (const r of rows) console.log(r);
    }
    await embedded.flushRequests();
    const recorded = await store.db
      .selectFrom('interactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    console.log(
      `    requests recorded by the embedded server: ${Number(recorded?.n ?? 0).toLocaleString('en')}`,
    );
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export const discoveryBenchmark: Benchmark = {
  title: 'discovery registry: build 1M products, republish one change, embedded server vs nginx',
  run,
};
