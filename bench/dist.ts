/**
 * The single binary against the same code run by node: time from starting `serve` to its first
 * answer (GET /v1/products, body read), for dist/agentshelf-linux-x64 and for
 * `node build/src/main.js serve` on the same Node 26, in alternating rounds over the same
 * demo store. Target: the binary within 1.5x. Also the binary's size.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBinary } from '../test/support/dist.js';
import type { Benchmark } from './benchmark.js';
import { MAIN, ROOT, scratchDir, startChild } from './support.js';

const ROUNDS = Number(process.env.BENCH_DIST_ROUNDS ?? 15);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Spawn -> "serving" line -> first GET answered; then SIGTERM and wait for the exit. */
async function firstAnswerMs(
  command: string,
  args: string[],
  env: Record<string, string>,
  key: string,
): Promise<number> {
  const started = performance.now();
  const child = await startChild(command, args, {
    env: { ...env, PORT: '0', FEEDS_PORT: '0', LOG_LEVEL: 'warn' },
    ready: /serving the platform API at (http:\/\/\S+)/,
  });
  try {
    const res = await fetch(`${child.match[1]}/v1/products?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /v1/products answered ${res.status}`);
    return performance.now() - started;
  } finally {
    await child.stop();
  }
}

export const distBenchmark: Benchmark = {
  title: 'single binary: serve start-up to first answer vs node build/src/main.js (Node 26)',
  run: async () => {
    const binary = ensureBinary();
    const node26 = spawnSync('bash', [path.join(ROOT, 'scripts/node.sh'), '26'], {
      encoding: 'utf8',
    }).stdout.trim();
    const dir = scratchDir('dist');
    const env = {
      DATA_DIR: path.join(dir, 'data'),
      PUBLIC_DIR: path.join(dir, 'public'),
      AGENTSHELF_CACHE_DIR: path.join(dir, 'cache'),
      LOG_LEVEL: 'warn',
    };
    const cli = (args: string[]) => {
      const res = spawnSync(binary, args, {
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      if (res.status !== 0) throw new Error(`agentshelf ${args.join(' ')}: ${res.stderr}`);
      return res.stdout;
    };
    cli(['migrate']);
    cli(['seed', '--demo']);
    cli(['build']); // published, so no start pays for a pipeline run
    const key = cli(['keys', 'create', '--level', 'read_only']).trim();

    const runs = {
      binary: () => firstAnswerMs(binary, ['serve'], env, key),
      node: () => firstAnswerMs(node26, [MAIN, 'serve'], env, key),
    };
    // One unmeasured start each: page cache, and the binary's addon copied to the cache dir.
    await runs.binary();
    await runs.node();
    const times = { binary: [] as number[], node: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other.
      const order = round % 2 ? (['node', 'binary'] as const) : (['binary', 'node'] as const);
      for (const which of order) times[which].push(await runs[which]());
    }
    const b = median(times.binary);
    const n = median(times.node);
    const ratio = b / n;
    console.log(`  rounds: ${ROUNDS} each, alternating; median spawn -> first answer`);
    console.log(`  binary (dist/agentshelf-linux-x64): ${b.toFixed(1)} ms`);
    console.log(`  node ${path.relative(ROOT, MAIN)} serve:      ${n.toFixed(1)} ms`);
    console.log(
      `  ratio: ${ratio.toFixed(2)}x (target: within 1.5x) ${ratio <= 1.5 ? 'OK' : 'OVER'}`,
    );
    console.log(`  binary size: ${fs.statSync(binary).size.toLocaleString('en')} bytes`);
  },
};
