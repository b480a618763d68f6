import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { createFeed, deleteFeed } from '../src/domain/feeds/feeds.js';
import type { StageOutput } from '../pipeline/stage.js';
import { postgresBin, startPgCluster } from '../test/support/postgres.js';
import type { Benchmark } from './benchmark.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const FLOOR = path.join(HERE, 'pipeline-floor.js');
const WORK = path.join(HERE, '../../bench/.work');
const FORMATS = ['json', 'csv', 'xml'] as const;
const MB = 1024 * 1024;

interface Measured {
  size: number;
  /** Floors measured before the first build and after each build. */
  floors: { perSecond: number; rssMb: number }[];
  formats: Record<(typeof FORMATS)[number], number>;
  rssMb: number;
}

const n = (v: number) => Math.round(v).toLocaleString('en');

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * MB,
  });
  return stdout;
}

/**
 * One size: seed, then floor and build in turns (floor, json, floor, csv, floor, xml, floor),
 * each build over a catalogue with that one feed, and each output deleted once measured, so
 * no run pays for writing back another's files.
 */
async function measure(size: number, databaseUrl?: string): Promise<Measured> {
  const dir = path.join(WORK, `pipeline-${size}${databaseUrl ? '-postgres' : ''}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const env: Record<string, string> = {
    DATA_DIR: path.join(dir, 'data'),
    PUBLIC_DIR: path.join(dir, 'public'),
    LOG_LEVEL: 'warn',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  try {
    const seedStarted = performance.now();
    await node([CLI, 'seed', '--synthetic', String(size), '--json'], env);
    console.log(
      `  ${n(size)} products seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    const config = loadConfig(env);
    const floorOut = path.join(dir, 'floor.ndjson');
    // The floor reads the SQLite file; on PostgreSQL the SQLite run of the same size is the
    // baseline instead.
    const floor = async () => {
      if (databaseUrl) return { perSecond: NaN, rssMb: NaN };
      const out = JSON.parse(await node([FLOOR, config.DATABASE_FILE, floorOut], env)) as {
        products: number;
        ms: number;
        peak_rss_bytes: number;
      };
      fs.rmSync(floorOut, { force: true });
      return { perSecond: (out.products / out.ms) * 1000, rssMb: out.peak_rss_bytes / MB };
    };
    const floors = [await floor()];
    const formats = {} as Measured['formats'];
    let rssMb = 0;
    for (const format of FORMATS) {
      const store = openStore(config);
      const feed = await createFeed(
        store.db,
        { name: `all ${format}`, format },
        { baseUrl: config.BASE_URL, startDelayMs: 0 },
      );
      await store.close();
      const build = JSON.parse(await node([CLI, 'build', '--json'], env)) as {
        peak_rss_bytes: number;
        stages: { outputs?: StageOutput[] }[];
      };
      const output = build.stages.flatMap((s) => s.outputs ?? [])[0]!;
      if (!output.ok) throw new Error(`the ${format} feed failed: ${output.error}`);
      formats[format] = (output.products / output.ms) * 1000;
      rssMb = Math.max(rssMb, build.peak_rss_bytes / MB);
      const again = openStore(config);
      await deleteFeed(again.db, feed.id);
      await again.close();
      fs.rmSync(path.join(config.DATA_DIR, 'feeds'), { recursive: true, force: true });
      floors.push(await floor());
    }
    return { size, floors, formats, rssMb };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(m: Measured): void {
  const floors = m.floors.map((f) => n(f.perSecond)).join(', ');
  console.log(
    `  floor (bare iterate() + JSON.stringify lines), before and after each build: ${floors} products/s; peak RSS ${n(m.floors[0]!.rssMb)} MB`,
  );
  for (const [i, format] of FORMATS.entries()) {
    // The floor measured just before and just after this format's build.
    const floor = (m.floors[i]!.perSecond + m.floors[i + 1]!.perSecond) / 2;
    const ratio = m.formats[format] / floor;
    console.log(
      `  ${format.padEnd(4)} ${n(m.formats[format]).padStart(9)} products/s  ${ratio.toFixed(2)}x the floor around it  (target >= 0.70: ${ratio >= 0.7 ? 'met' : 'MISSED'})`,
    );
  }
  console.log(`  build peak RSS ${n(m.rssMb)} MB (the largest of the three builds)`);
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
    await postgresColumn(results);
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

/**
 * Each size again on PostgreSQL (a local cluster, started as the test support does): each
 * feed format's products/s against SQLite's of the same size in this run (target >= 0.70).
 * BENCH_POSTGRES=0 skips it.
 */
async function postgresColumn(sqlite: Measured[]): Promise<void> {
  if (process.env.BENCH_POSTGRES === '0') return;
  if (!postgresBin()) {
    console.log('\n  PostgreSQL column skipped: no /usr/lib/postgresql/*/bin');
    return;
  }
  const cluster = await startPgCluster();
  try {
    for (const base of sqlite) {
      const name = `bench_pipeline_${base.size}`;
      await cluster.admin(`create database ${name}`);
      console.log(`\n${n(base.size)} products on PostgreSQL (same seed, same feeds)`);
      const m = await measure(base.size, cluster.url(name));
      for (const format of FORMATS) {
        const ratio = m.formats[format] / base.formats[format];
        console.log(
          `  ${format.padEnd(4)} ${n(m.formats[format]).padStart(9)} products/s  ${ratio.toFixed(2)}x SQLite's ${n(base.formats[format])}  (target >= 0.80, issue 25: ${ratio >= 0.8 ? 'met' : 'MISSED'})`,
        );
      }
      console.log(`  build peak RSS ${n(m.rssMb)} MB`);
      await cluster.admin(`drop database ${name}`);
    }
  } finally {
    cluster.destroy();
  }
}
