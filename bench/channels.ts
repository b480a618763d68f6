/**
 * Channels (issue 22): each profile's generation against its floor (the same rows read,
 * serialised and gzipped by a bare loop, bench/channels-floor.ts), measured in turns in the
 * same run; the push deliveries beside their baselines (SFTP against OpenSSH's sftp, the ACP
 * push against a bare PATCH loop, and 0 bytes sent when nothing changed:
 * bench/channels-delivery.ts); and the builds' peak RSS from the smallest size to the largest.
 *
 * node build/bench/run.js channels; BENCH_CHANNELS_SIZES=20000 for a quick look (the issue's
 * figures are 100,000 and 1,000,000).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { createFeed, deleteFeed } from '../src/domain/feeds/feeds.js';
import type { FeedCreateInput } from '../src/domain/feeds/schemas.js';
import type { StageOutput } from '../pipeline/stage.js';
import type { Benchmark } from './benchmark.js';
import {
  deliveryToolsMissing,
  measureDeliveries,
  reportDeliveries,
  type DeliveryFigures,
} from './channels-delivery.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const FLOOR = path.join(HERE, 'channels-floor.js');
const WORK = path.join(HERE, '../../bench/.work');
const MB = 1024 * 1024;

/** The profile and format pairs measured (each as its platform takes it). */
const PAIRS: Pick<FeedCreateInput, 'profile' | 'format' | 'compression'>[] = [
  { profile: 'openai', format: 'jsonl', compression: 'gzip' },
  { profile: 'google', format: 'xml' },
  { profile: 'acp', format: 'jsonl' },
  { profile: 'stripe', format: 'csv' },
];

const label = (p: (typeof PAIRS)[number]) =>
  `${p.profile} ${p.format}${p.compression ? '.gz' : ''}`;
const n = (v: number) => Math.round(v).toLocaleString('en');

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * MB,
  });
  return stdout;
}

interface Measured {
  size: number;
  /** Products/s of the floor before the first build and after each. */
  floors: number[];
  pairs: { label: string; perSecond: number; excluded: number }[];
  rssMb: number;
  /** The push deliveries (SFTP, ACP, no change); undefined when sshd or sftp is missing. */
  deliveries?: DeliveryFigures;
}

/** One size: seed, then floor and build in turns, each build with its one feed. */
async function measure(size: number): Promise<Measured> {
  const dir = path.join(WORK, `channels-${size}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const env = {
    DATA_DIR: path.join(dir, 'data'),
    PUBLIC_DIR: path.join(dir, 'public'),
    LOG_LEVEL: 'warn',
    // The deliveries' sshd and ACP receiver listen on loopback.
    ALLOW_PRIVATE_TARGETS: 'true',
  };
  try {
    await node([CLI, 'seed', '--synthetic', String(size), '--json'], env);
    const config = loadConfig(env);
    const floorOut = path.join(dir, 'floor.ndjson.gz');
    const floor = async () => {
      const out = JSON.parse(await node([FLOOR, config.DATABASE_FILE, floorOut], env)) as {
        products: number;
        ms: number;
      };
      fs.rmSync(floorOut, { force: true });
      return (out.products / out.ms) * 1000;
    };
    const floors = [await floor()];
    const pairs: Measured['pairs'] = [];
    let rssMb = 0;
    for (const pair of PAIRS) {
      const store = openStore(config);
      const feed = await createFeed(
        store.db,
        { name: label(pair), ...pair },
        { baseUrl: config.BASE_URL, startDelayMs: 0 },
      );
      await store.close();
      const build = JSON.parse(await node([CLI, 'build', '--json'], env)) as {
        peak_rss_bytes: number;
        stages: { outputs?: StageOutput[] }[];
      };
      const output = build.stages.flatMap((s) => s.outputs ?? [])[0]!;
      if (!output.ok) throw new Error(`${label(pair)} failed: ${output.error}`);
      const again = openStore(config);
      const row = await again.db
        .selectFrom('feeds')
        .select(['diagnostics'])
        .where('id', '=', feed.id)
        .executeTakeFirstOrThrow();
      await deleteFeed(again.db, feed.id);
      await again.close();
      const diagnostics = JSON.parse(row.diagnostics ?? '{}') as {
        products?: number;
        excluded?: number;
      };
      // Products read and mapped per second (included and excluded alike).
      pairs.push({
        label: label(pair),
        perSecond: ((diagnostics.products ?? output.products) / output.ms) * 1000,
        excluded: diagnostics.excluded ?? 0,
      });
      rssMb = Math.max(rssMb, build.peak_rss_bytes / MB);
      fs.rmSync(path.join(config.DATA_DIR, 'feeds'), { recursive: true, force: true });
      floors.push(await floor());
    }
    if (deliveryToolsMissing()) return { size, floors, pairs, rssMb };
    const deliveries = await measureDeliveries(dir, env, config);
    rssMb = Math.max(rssMb, deliveries.rssMb);
    return { size, floors, pairs, rssMb, deliveries };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(m: Measured): void {
  console.log(
    `  floor (bare iterate() + JSON lines + gzip), before and after each build: ${m.floors.map(n).join(', ')} products/s`,
  );
  for (const [i, pair] of m.pairs.entries()) {
    const floor = (m.floors[i]! + m.floors[i + 1]!) / 2;
    const ratio = pair.perSecond / floor;
    console.log(
      `  ${pair.label.padEnd(15)} ${n(pair.perSecond).padStart(9)} products/s  ${ratio.toFixed(2)}x the floor around it  (target >= 0.70: ${ratio >= 0.7 ? 'met' : 'MISSED'}; ${n(pair.excluded)} excluded)`,
    );
  }
  if (m.deliveries) reportDeliveries(m.deliveries);
  else console.log(`  push deliveries not measured: ${deliveryToolsMissing()}`);
  console.log(`  build peak RSS ${n(m.rssMb)} MB (the largest of the builds)`);
}

export const channelsBenchmark: Benchmark = {
  title:
    "channels: each profile's generation beside a bare read + serialise + gzip floor; SFTP and ACP push beside OpenSSH's sftp and a bare PATCH loop",
  run: async () => {
    const sizes = (process.env.BENCH_CHANNELS_SIZES ?? '100000,1000000').split(',').map(Number);
    const results: Measured[] = [];
    for (const size of sizes) {
      console.log(
        `\n${n(size)} products (seed --synthetic ${size}): ${PAIRS.map(label).join(', ')}`,
      );
      const m = await measure(size);
      report(m);
      results.push(m);
    }
    const [small, large] = [results[0], results[results.length - 1]];
    if (small && large && large.size > small.size) {
      const ratio = large.rssMb / small.rssMb;
      console.log(
        `\n  peak RSS ${n(large.size)} / ${n(small.size)}: ${ratio.toFixed(2)}x (target <= 1.30: ${ratio <= 1.3 ? 'met' : 'MISSED'})`,
      );
    }
  },
};
