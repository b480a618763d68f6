/**
 * The feed URL source (src/platforms/feed.ts) reading our own exports
 * (JSON, CSV, XML) and NDJSON of the same records from a local HTTP server, at 10,000 and
 * 100,000 products (BENCH_FEED_SIZES), each run in a process of its own
 * (bench/feed-source-child.ts). Beside it, a floor measured in the same run over the same
 * file: the least a reader must do (csv-parse's stream with columns for CSV, split and
 * JSON.parse per line for NDJSON, one JSON.parse for JSON, one fast-xml-parser parse of the
 * whole document for XML; the last two hold the whole file). Streaming means the source's
 * peak RSS stays flat from 10,000 to 100,000 products (target: within 1.3x).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readCatalogueProduct } from '../src/domain/catalogue/product.js';
import { feedItemOf, feedSettings, type FeedRecord } from '../src/domain/feeds/record.js';
import { FEED_FORMATTERS } from '../pipeline/feed-formats.js';
import { catalogueRow } from '../test/support/catalogue.js';
import type { Benchmark } from './benchmark.js';
import { fmt, ROOT, scratchDir, table, verdict } from './support.js';

const SIZES = (process.env.BENCH_FEED_SIZES ?? '10000,100000').split(',').map(Number);
const FORMATS = ['csv', 'ndjson', 'json', 'xml'] as const;
type Format = (typeof FORMATS)[number];
const CHILD = path.join(ROOT, 'build', 'bench', 'feed-source-child.js');

function record(i: number): FeedRecord {
  const settings = feedSettings('Bench Store', 'https://store.example');
  const row = catalogueRow({
    id: `SKU-${i}`,
    name: `Trail shoe ${i}, "waterproof" & light`,
    description: `A shoe for trails.\nSize ${i % 13}, <b>bold</b> colour ${i % 7}.`,
    price_minor: 1000 + (i % 9000),
    images: [`https://img.example.com/${i}/a.jpg`, `https://img.example.com/${i}/b.jpg`],
    attributes: {
      brand: `Brand ${i % 50}`,
      url: `https://store.example/p/${i}`,
      gtin: '4006381333931',
      availability: 'in_stock',
      item_group_id: `G-${Math.floor(i / 4)}`,
      size: String(i % 13),
    },
  });
  return feedItemOf(readCatalogueProduct(row, settings), settings).record;
}

/** Writes a feed of `size` products in batches (never the whole catalogue in memory). */
function writeFeed(file: string, format: Format, size: number): void {
  const fd = fs.openSync(file, 'w');
  const meta = { id: 'feed_bench', name: 'Bench', storeName: 'Bench', storeUrl: 'https://x' };
  const f = format === 'ndjson' ? undefined : FEED_FORMATTERS[format];
  if (f) fs.writeSync(fd, f.begin(meta));
  for (let from = 0; from < size; from += 1000) {
    const batch: FeedRecord[] = [];
    for (let i = from; i < Math.min(size, from + 1000); i++) batch.push(record(i));
    fs.writeSync(
      fd,
      f ? f.records(batch, from === 0) : batch.map((r) => `${JSON.stringify(r)}\n`).join(''),
    );
  }
  if (f) fs.writeSync(fd, f.end(meta));
  fs.closeSync(fd);
}

interface Measure {
  products: number;
  ms: number;
  peak_rss_bytes: number;
}

function measure(mode: 'source' | 'floor', file: string, format: Format): Measure {
  const res = spawnSync(process.execPath, [CHILD, mode, file, format], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (res.status !== 0) throw new Error(`feed-source-child ${mode} ${format} exited ${res.status}`);
  return JSON.parse(res.stdout) as Measure;
}

export const feedSourceBenchmark: Benchmark = {
  title: 'feed URL source: products/s per format vs a bare parse of the same file; peak RSS',
  run: async () => {
    const dir = scratchDir('feed-source');
    const rows: (string | number)[][] = [];
    const rss = new Map<Format, number[]>();
    for (const size of SIZES) {
      for (const format of FORMATS) {
        const file = path.join(dir, `feed-${size}.${format}`);
        writeFeed(file, format, size);
        const floor = measure('floor', file, format);
        const source = measure('source', file, format);
        if (source.products !== size || floor.products !== size)
          throw new Error(`${format}: ${source.products} (floor ${floor.products}) of ${size}`);
        const rate = size / (source.ms / 1000);
        const floorRate = size / (floor.ms / 1000);
        const mb = source.peak_rss_bytes / 1024 / 1024;
        rss.set(format, [...(rss.get(format) ?? []), mb]);
        rows.push([
          format,
          fmt(size),
          fmt(fs.statSync(file).size / 1024 / 1024, 1),
          fmt(rate),
          fmt(floorRate),
          fmt(rate / floorRate, 2),
          fmt(mb),
          fmt(floor.peak_rss_bytes / 1024 / 1024),
        ]);
        fs.rmSync(file);
      }
    }
    table(
      [
        'format',
        'products',
        'file MB',
        'source products/s',
        'floor products/s',
        'ratio',
        'source peak RSS MB',
        'floor peak RSS MB',
      ],
      rows,
    );
    if (SIZES.length >= 2)
      for (const [format, [small, large]] of rss)
        console.log(
          `${format}: peak RSS ${fmt(small!)} MB at ${fmt(SIZES[0]!)}, ${fmt(large!)} MB at ` +
            `${fmt(SIZES.at(-1)!)}: ${verdict(large! <= small! * 1.3)} (within 1.3x)`,
        );
  },
};
