/**
 * `agentshelf analytics import` of a gzipped Cloudflare Logpush file (generated: 1,000,000
 * lines by default, BENCH_ANALYTICS_IMPORT_LINES for another size) into a fresh store, beside
 * a floor that only gunzips, splits lines and JSON.parses the same file
 * (analytics-import-floor.ts), measured before and after in the same run. Target: the import
 * runs at 0.5x the floor's lines/s or better. Also printed: the same file with nothing stored
 * (--dry-run), and an insert floor (the parse floor plus one prepared INSERT per line) that
 * bounds what any store of every request can reach on this machine.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { loadConfig } from '../src/config.js';
import type { Benchmark } from './benchmark.js';
import { fmt, runCli, scratchDir, verdict } from './support.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // build/bench
const FLOOR = path.join(HERE, 'analytics-import-floor.js');

const AGENTS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
  'CCBot/2.0 (https://commoncrawl.org/faq/)',
  'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
];

/** A Logpush http_requests file: `lines` requests over 30 days, 90% for the discovery tree. */
export async function generate(file: string, lines: number): Promise<void> {
  const gzip = zlib.createGzip({ level: 6 });
  const out = fs.createWriteStream(file);
  gzip.pipe(out);
  const start = Date.UTC(2026, 9, 1) * 1e6; // ns
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  let buf = '';
  for (let i = 0; i < lines; i++) {
    const brand = `brand-${Math.floor(rand() * 200)}`;
    const r = rand();
    const p =
      r < 0.1
        ? '/assets/app.js'
        : r < 0.3
          ? '/v1/index.json'
          : r < 0.6
            ? `/v1/brands/${brand}`
            : `/v1/feeds/${brand}/products.${r < 0.8 ? 'json' : 'ndjson'}`;
    const ts = start + Math.floor((i / lines) * 30 * 86_400e9);
    const line = {
      CacheCacheStatus: 'hit',
      ClientIP: `203.0.${i & 255}.${(i >> 8) & 255}`,
      ClientRequestHost: 'feeds.example.com',
      ClientRequestMethod: 'GET',
      ClientRequestPath: p,
      ClientRequestProtocol: 'HTTP/2',
      ClientRequestReferer: '',
      ClientRequestURI: p,
      ClientRequestUserAgent: AGENTS[Math.floor(rand() * AGENTS.length)],
      EdgeResponseBytes: 1000 + Math.floor(rand() * 90_000),
      EdgeResponseContentType: 'application/json',
      EdgeResponseStatus: rand() < 0.95 ? 200 : 304,
      EdgeStartTimestamp: ts,
      RayID: (0x8e00000000000000n + BigInt(i)).toString(16),
    };
    buf += `${JSON.stringify(line)}\n`;
    if (buf.length > 1 << 20) {
      if (!gzip.write(buf)) await new Promise<void>((r) => gzip.once('drain', () => r()));
      buf = '';
    }
  }
  gzip.end(buf);
  await new Promise<void>((r) => out.once('close', () => r()));
}

/** The floor's lines/s on `file` (with `database`: the insert floor), in a process of its own. */
function floor(file: string, database?: string): number {
  const res = spawnSync(process.execPath, [FLOOR, file, ...(database ? [database] : [])], {
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`floor failed: ${res.stderr}`);
  const out = JSON.parse(res.stdout) as { lines: number; ms: number };
  return (out.lines / out.ms) * 1000;
}

export const analyticsImportBenchmark: Benchmark = {
  title:
    'analytics import: a gzipped Cloudflare log, lines/s beside a gunzip + split + JSON.parse floor',
  run: async () => {
    const lines = Number(process.env.BENCH_ANALYTICS_IMPORT_LINES ?? 1_000_000);
    const dir = scratchDir('analytics-import');
    const file = path.join(dir, 'http_requests.ndjson.gz');
    const genStarted = performance.now();
    await generate(file, lines);
    console.log(
      `  ${fmt(lines)} lines generated (${fmt(fs.statSync(file).size / 1024 / 1024, 1)} MB gzipped) in ${fmt((performance.now() - genStarted) / 1000, 1)} s`,
    );
    const env = { DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' };
    runCli(['migrate'], env);
    const before = floor(file);
    const dry = JSON.parse(runCli(['analytics', 'import', '--json', '--dry-run', file], env)) as {
      lines: number;
      duration_ms: number;
    };
    const summary = JSON.parse(runCli(['analytics', 'import', '--json', file], env)) as {
      lines: number;
      imported: number;
      skipped: number;
      duration_ms: number;
    };
    const after = floor(file);
    // The insert floor writes into a store of its own (the same dedupe keys as the import's).
    const insertEnv = { DATA_DIR: path.join(dir, 'insert-floor'), LOG_LEVEL: 'warn' };
    runCli(['migrate'], insertEnv);
    const insertFloor = floor(file, loadConfig(insertEnv).DATABASE_FILE);
    const again = JSON.parse(runCli(['analytics', 'import', '--json', file], env)) as {
      duplicates: number;
      imported: number;
      duration_ms: number;
    };
    const floorRate = (before + after) / 2;
    const rate = (summary.lines / summary.duration_ms) * 1000;
    const ratio = rate / floorRate;
    console.log(
      `  floor (gunzip + split + JSON.parse), before and after: ${fmt(before)}, ${fmt(after)} lines/s`,
    );
    console.log(
      `  insert floor (the same + one prepared INSERT per line, no classification, dedupe or rollups): ${fmt(insertFloor)} lines/s, ${(insertFloor / floorRate).toFixed(2)}x the floor`,
    );
    const dryRatio = ((dry.lines / dry.duration_ms) * 1000) / floorRate;
    console.log(
      `  import --dry-run (gunzip, parse, tree filter; nothing stored): ${fmt((dry.lines / dry.duration_ms) * 1000)} lines/s, ${dryRatio.toFixed(2)}x the floor`,
    );
    console.log(
      `  import: ${fmt(summary.lines)} lines (${fmt(summary.imported)} stored, ${fmt(summary.skipped)} not for the tree) in ${fmt(summary.duration_ms / 1000, 1)} s: ${fmt(rate)} lines/s, ${ratio.toFixed(2)}x the floor (target >= 0.50: ${verdict(ratio >= 0.5)})`,
    );
    console.log(`  import against the insert floor: ${(rate / insertFloor).toFixed(2)}x`);
    console.log(
      `  re-import: ${fmt(again.imported)} stored, ${fmt(again.duplicates)} duplicates in ${fmt(again.duration_ms / 1000, 1)} s (${(((summary.lines / again.duration_ms) * 1000) / floorRate).toFixed(2)}x the floor)`,
    );
    fs.rmSync(dir, { recursive: true, force: true });
  },
};
