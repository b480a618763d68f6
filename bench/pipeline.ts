import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/database.js';
import { createFeed } from '../src/domain/feeds.js';
import type { StageOutput } from '../pipeline/stage.js';
import type { Benchmark } from './registry.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const FLOOR = path.join(HERE, 'pipeline-floor.js');
const WORK = path.join(HERE, '../../bench/.work');
const FORMATS = ['json', 'csv', 'xml'] as const;
const MB = 1024 * 1024;

interface Measured {
  size: number;
  floor: { perSecond: number; rssMb: number }[];
  formats: Record<(typeof FORMATS)[number], number>;
  rssMb: number;
  unchangedMs: number;
}

const n = (v: number) => Math.round(v).toLocaleString('en');

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * MB,
  });
  return stdout;
}

async function measure(size: number): Promise<Measured> {
  const dir = path.join(WORK, `pipeline-${size}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const env = {
    DATA_DIR: path.join(dir, 'data'),
    PUBLIC_DIR: path.join(dir, 'public'),
    LOG_LEVEL: 'warn',
  };
  try {
    const seedStarted = performance.now();
    await node([CLI, 'seed', '--synthetic', String(size), '--json'], env);
    console.log(
      `  ${n(size)} products seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    const config = loadConfig(env);
    const store = openStore(config);
    for (const format of FORMATS) {
      await createFeed(
        store.db,
        { name: `all ${format}`, format },
        { baseUrl: config.BASE_URL, startDelayMs: 0 },
      );
    }
    await store.close();

    const floor = async () => {
      const out = JSON.parse(
        await node([FLOOR, config.DATABASE_FILE, path.join(dir, 'floor.ndjson')], env),
      ) as { products: number; ms: number; peak_rss_bytes: number };
      fs.rmSync(path.join(dir, 'floor.ndjson'), { force: true });
      return { perSecond: (out.products / out.ms) * 1000, rssMb: out.peak_rss_bytes / MB };
    };
    // The floor runs before and after the build, so a machine getting busier shows.
    const before = await floor();
    const build = JSON.parse(await node([CLI, 'build', '--json'], env)) as {
      peak_rss_bytes: number;
      stages: { outputs?: StageOutput[] }[];
    };
    const after = await floor();
    const outputs = build.stages.flatMap((s) => s.outputs ?? []);
    const formats = Object.fromEntries(
      FORMATS.map((format, i) => {
        const o = outputs[i]!;
        if (!o.ok) throw new Error(`the ${format} feed failed: ${o.error}`);
        return [format, (o.products / o.ms) * 1000];
      }),
    ) as Measured['formats'];
    const again = JSON.parse(await node([CLI, 'build', '--json'], env)) as { duration_ms: number };
    return {
      size,
      floor: [before, after],
      formats,
      rssMb: build.peak_rss_bytes / MB,
      unchangedMs: again.duration_ms,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(m: Measured): boolean {
  const floor = (m.floor[0]!.perSecond + m.floor[1]!.perSecond) / 2;
  console.log(
    `  floor (bare iterate() + JSON.stringify lines): ${n(m.floor[0]!.perSecond)} and ${n(m.floor[1]!.perSecond)} products/s (before and after the build), peak RSS ${n(m.floor[0]!.rssMb)} MB`,
  );
  let ok = true;
  for (const format of FORMATS) {
    const ratio = m.formats[format] / floor;
    ok &&= ratio >= 0.5;
    console.log(
      `  ${format.padEnd(4)} ${n(m.formats[format]).padStart(9)} products/s  ${ratio.toFixed(2)}x the floor  (target >= 0.50: ${ratio >= 0.5 ? 'met' : 'MISSED'})`,
    );
  }
  console.log(`  build peak RSS ${n(m.rssMb)} MB (three feeds, one after another)`);
  console.log(`  a second build, content unchanged: ${(m.unchangedMs / 1000).toFixed(1)} s`);
  return ok;
}

export const pipelineBenchmark: Benchmark = {
  title:
    'feed pipeline: products/s per format and peak RSS, beside a bare iterate() floor on the same rows',
  run: async () => {
    // BENCH_PIPELINE_SIZES=20000 for a quick look; the figures are 100k and 1M.
    const sizes = (process.env.BENCH_PIPELINE_SIZES ?? '100000,1000000').split(',').map(Number);
    const results: Measured[] = [];
    for (const size of sizes) {
      console.log(`\n${n(size)} products (seed --synthetic ${size}), feeds: ${FORMATS.join(', ')}`);
      const m = await measure(size);
      report(m);
      results.push(m);
    }
    const small = results.find((r) => r.size === 100_000);
    const large = results.find((r) => r.size === 1_000_000);
    if (large) {
      const under = large.rssMb < 256;
      console.log(
        `\n  peak RSS at 1,000,000: ${n(large.rssMb)} MB (target < 256 MB: ${under ? 'met' : 'MISSED'})`,
      );
      if (small) {
        const ratio = large.rssMb / small.rssMb;
        console.log(
          `  peak RSS 1,000,000 / 100,000: ${ratio.toFixed(2)}x (target <= 1.30: ${ratio <= 1.3 ? 'met' : 'MISSED'})`,
        );
      }
    }
  },
};
