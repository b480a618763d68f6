import { execFile, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { updateProduct } from '../src/domain/products/products.js';
import type { SeenRequest } from '../test/support/s3.js';
import type { Benchmark } from './benchmark.js';
import { startAgentshelf, unlimitedKey } from './support.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const FLOOR = path.join(HERE, 'publish-floor.js');
const S3_CHILD = path.join(HERE, 'publish-s3.js');
const WORK = path.join(HERE, '../../bench/.work');
/** Uploads in flight: src/publish/s3.ts's default, given to the floor too. */
const CONCURRENCY = 12;

const n = (v: number) => Math.round(v).toLocaleString('en');

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** A purge endpoint answering as Cloudflare does; records when the first call arrived. */
async function startPurgeClock(): Promise<{
  url: string;
  firstAt: () => number | undefined;
  /** Resolves at the next call, with its time. */
  next: () => Promise<number>;
  close: () => Promise<void>;
}> {
  let first: number | undefined;
  const waiting: ((at: number) => void)[] = [];
  const server = http.createServer((req, res) => {
    const at = performance.now();
    first ??= at;
    for (const resolve of waiting.splice(0)) resolve(at);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"success":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstAt: () => first,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** s3rver behind the counting proxy, in a child (bench/publish-s3.ts), and a way to ask it. */
async function startS3Child(dir: string, buckets: string[]) {
  const child: ChildProcess = fork(S3_CHILD, [dir, ...buckets], {
    execArgv: ['--openssl-legacy-provider'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once('message', (m) => resolve(m as T));
      child.once('exit', (code) => reject(new Error(`the s3rver child exited (${code})`)));
    });
  const ask = <T>(cmd: string) => {
    const answer = next<T>();
    child.send({ cmd });
    return answer;
  };
  const { endpoint } = await next<{ endpoint: string }>();
  return {
    endpoint,
    reset: () => ask('reset'),
    requests: async () => (await ask<{ requests: SeenRequest[] }>('requests')).requests,
    close: async () => {
      await ask('close');
      child.kill();
    },
  };
}

function count(
  requests: SeenRequest[],
  method: string,
  test: (url: string) => boolean = () => true,
) {
  return requests.filter((r) => r.method === method && test(r.url)).length;
}

/** A JSON log line of serve's whose msg is `msg`, the last one (undefined when none). */
function logLine(output: string, msg: string): Record<string, number> | undefined {
  const lines = output.split('\n').filter((l) => l.includes(`"msg":"${msg}"`));
  return lines.length ? (JSON.parse(lines.at(-1)!) as Record<string, number>) : undefined;
}

/**
 * Inside a running `serve` (process start excluded): one product's price changed through the
 * API, and the time from sending the write to the first CDN purge call, with where it went.
 */
async function changeInsideServe(
  env: Record<string, string>,
  purge: Awaited<ReturnType<typeof startPurgeClock>>,
): Promise<void> {
  const key = unlimitedKey(env, 'read_write', 'bench-publish');
  const server = await startAgentshelf({ ...env, LOG_LEVEL: 'info', FEEDS_CRON: '0 0 1 1 *' });
  try {
    const base = server.match[1]!;
    const purged = purge.next();
    const sent = performance.now();
    const res = await fetch(`${base}/v1/products/syn_00000001`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ price: 123.45 }),
    });
    if (!res.ok) throw new Error(`PUT: ${res.status} ${await res.text()}`);
    const answered = performance.now();
    const seconds = ((await purged) - sent) / 1000;
    // The run logs once it ends, a moment after the purge call.
    for (let i = 0; i < 100 && !logLine(server.output(), 'pipeline run succeeded'); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const run = logLine(server.output(), 'pipeline run succeeded');
    const sync = logLine(server.output(), 'published to object storage');
    // serve checks its output once it listens; the write above can land before that check,
    // which then sees the write ("products or feeds changed") and its run carries the change.
    const stale = logLine(server.output(), 'published output is stale: running the pipeline');
    if (stale)
      console.log(
        `  (serve's start check found its output stale, "${String(stale.reason)}": a run at start, which the figure includes; when the reason is a change, it can be the write above)`,
      );
    const parts = sync
      ? `write answered ${Math.round(answered - sent)} ms; run ${run?.ms ?? '?'} ms of which manifest ${sync.scanMs} ms, listing ${sync.listMs} ms, compare ${sync.compareMs} ms, ${sync.uploaded} uploads ${sync.uploadMs} ms, purge ${sync.purgeMs} ms`
      : 'no publication logged';
    console.log(
      `  one price change inside a running serve: ${seconds.toFixed(2)} s from the write to the purge call (target < 2 s: ${seconds < 2 ? 'met' : 'MISSED'}); ${parts}`,
    );
  } finally {
    await server.stop();
  }
}

export const publishBenchmark: Benchmark = {
  title:
    'publish to object storage (s3rver on loopback): full upload beside a bare aws4fetch PUT loop, one change, nothing changed',
  run: async () => {
    // BENCH_PUBLISH_PRODUCTS=10000 BENCH_PUBLISH_BRANDS=100 for a quick look; the figure is 1M over 1,000 brands.
    const products = Number(process.env.BENCH_PUBLISH_PRODUCTS ?? 1_000_000);
    const brands = Number(process.env.BENCH_PUBLISH_BRANDS ?? 1000);
    const dir = path.join(WORK, `publish-${products}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const fake = await startS3Child(path.join(dir, 's3'), ['shelf', 'floor']);
    const purge = await startPurgeClock();
    const env: Record<string, string> = {
      DATA_DIR: path.join(dir, 'data'),
      PUBLIC_DIR: path.join(dir, 'public'),
      LOG_LEVEL: 'warn',
      // Fixed: serve's ephemeral ports would otherwise change every URL in the tree, and make
      // its output stale at start (a run at start, which the change would wait behind).
      FEEDS_URL: 'https://registry.example.com',
      BASE_URL: 'https://shop.example.com',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      ALLOW_PRIVATE_TARGETS: 'true',
    };
    const target = `s3://shelf?endpoint=${fake.endpoint}&region=us-east-1`;
    try {
      await node(
        [CLI, 'seed', '--synthetic', String(products), '--brands', String(brands), '--json'],
        env,
      );
      await node([CLI, 'build', '--json'], env);
      // The manifest (digests of every file) as a pipeline run leaves it; not measured.
      await node([CLI, 'publish', '--dry-run', '--json'], { ...env, PUBLISH_TARGET: target });
      console.log(`\n${n(products)} products over ${n(brands)} brands`);

      const floor = JSON.parse(
        await node([FLOOR, fake.endpoint, 'floor', env.PUBLIC_DIR!, String(CONCURRENCY)], env),
      ) as { objects: number; bytes: number; ms: number };
      const started = performance.now();
      const full = JSON.parse(
        await node([CLI, 'publish', '--json'], { ...env, PUBLISH_TARGET: target }),
      ) as {
        uploaded: number;
        bytes: number;
      };
      const ms = performance.now() - started;
      const ratio = floor.ms / ms;
      console.log(
        `  floor (bare aws4fetch PUT loop, ${CONCURRENCY} in flight): ${n(floor.objects)} objects, ${n(floor.bytes / 1024 / 1024)} MB in ${(floor.ms / 1000).toFixed(2)} s`,
      );
      console.log(
        `  agentshelf publish: ${n(full.uploaded)} objects, ${n(full.bytes / 1024 / 1024)} MB in ${(ms / 1000).toFixed(2)} s (process start included)  ${ratio.toFixed(2)}x the floor's speed (target >= 0.70: ${ratio >= 0.7 ? 'met' : 'MISSED'})`,
      );

      await fake.reset();
      const idle = JSON.parse(
        await node([CLI, 'publish', '--json'], { ...env, PUBLISH_TARGET: target }),
      ) as { uploaded: number };
      const seen = await fake.requests();
      const listings = count(seen, 'GET', (u) => u.includes('list-type=2'));
      const idlePuts = count(seen, 'PUT');
      console.log(
        `  nothing changed: ${idle.uploaded} uploaded, ${idlePuts} PUTs, one listing in ${listings} page(s) of 1,000 keys, ${seen.length} requests in all (target 0 PUTs: ${idlePuts === 0 ? 'met' : 'MISSED'})`,
      );

      const config = loadConfig(env);
      const store = openStore(config);
      await updateProduct(store.db, 'syn_00000000', { name: 'Changed for the benchmark' });
      await store.close();
      await fake.reset();
      const changeStarted = performance.now();
      await node([CLI, 'build', '--json'], {
        ...env,
        PUBLISH_TARGET: target,
        CDN_PURGE: `cloudflare://zone?api=${purge.url}`,
        CLOUDFLARE_API_TOKEN: 'bench',
      });
      const purgeAt = purge.firstAt();
      const toPurge = purgeAt === undefined ? NaN : (purgeAt - changeStarted) / 1000;
      const changed = await fake.requests();
      const puts = count(changed, 'PUT');
      const plain = count(changed, 'PUT', (u) => !/\.(gz|br)$/.test(u));
      console.log(
        `  one product changed (build): ${puts} PUTs, ${plain} of them plain objects, the rest .gz/.br siblings (target <= 10: ${puts <= 10 ? 'met' : 'MISSED'}), ${toPurge.toFixed(2)} s from the build's start (process start included) to the purge call (target < 2 s: ${toPurge < 2 ? 'met' : 'MISSED'})`,
      );
      await changeInsideServe(
        {
          ...env,
          PUBLISH_TARGET: target,
          CDN_PURGE: `cloudflare://zone?api=${purge.url}`,
          CLOUDFLARE_API_TOKEN: 'bench',
        },
        purge,
      );
    } finally {
      await purge.close();
      await fake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
