import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { createReport } from '../src/domain/reports/reports.js';
import type { Benchmark } from './benchmark.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const CLI = path.join(HERE, '../src/main.js');
const CHILD = path.join(HERE, 'reports-generate.js');
const WORK = path.join(HERE, '../../bench/.work');
const FORMATS = ['csv', 'json', 'html'] as const;
const MB = 1024 * 1024;

async function node(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    maxBuffer: 64 * MB,
  });
  return stdout;
}

/**
 * The products report (the whole catalogue with its analytics) at each size of
 * BENCH_REPORTS_SIZES (default 10000,100000), in each format, each in a fresh process: products
 * per second, and the peak RSS, which must not grow with the catalogue (it is read a page at a
 * time).
 */
export const reportsBenchmark: Benchmark = {
  title: 'Products report: products/s and peak RSS per catalogue size',
  run: async () => {
    const sizes = (process.env.BENCH_REPORTS_SIZES ?? '10000,100000').split(',').map(Number);
    for (const size of sizes) {
      const dir = path.join(WORK, `reports-${size}`);
      fs.rmSync(dir, { recursive: true, force: true });
      const env = {
        DATA_DIR: path.join(dir, 'data'),
        PUBLIC_DIR: path.join(dir, 'public'),
        LOG_LEVEL: 'warn',
      };
      await node([CLI, 'seed', '--synthetic', String(size), '--json'], env);
      const config = loadConfig(env);
      for (const format of FORMATS) {
        const store = openStore(config);
        const report = await createReport(
          store.db,
          { type: 'products', format },
          config.BASE_URL,
          new Date(),
        );
        await store.close();
        const out = JSON.parse(await node([CHILD, report.id], env)) as {
          status: string;
          bytes: number;
          ms: number;
          peak_rss_bytes: number;
        };
        if (out.status !== 'ready') throw new Error(`report ${report.id}: ${out.status}`);
        console.log(
          `  ${size.toLocaleString('en')} products, ${format}: ${Math.round((size / out.ms) * 1000).toLocaleString('en')} products/s, ` +
            `${(out.bytes / MB).toFixed(1)} MB, peak RSS ${(out.peak_rss_bytes / MB).toFixed(0)} MB`,
        );
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
