/**
 * The floors of `analytics import`, run as their own process by bench/analytics-import.ts.
 *
 * - parse: the least any importer of a gzipped Cloudflare Logpush file must do: gunzip it,
 *   split it into lines and JSON.parse each.
 * - insert (with a migrated store's SQLite file): the same, plus one prepared INSERT per line
 *   into `interactions` (transactions of 5,000, the store's pragmas): the least a store of
 *   every request costs, with no classification, deduplication or rollup.
 *
 * Prints {lines, ms}.
 *
 * Usage: node build/bench/analytics-import-floor.js <file.ndjson.gz> [<sqlite file>]
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import { openSqlite } from '../src/db/sqlite/connection.js';

const [file, database] = process.argv.slice(2);
if (!file) {
  console.error('usage: analytics-import-floor <file.ndjson.gz> [<sqlite file>]');
  process.exit(2);
}

const COLUMNS = [
  'at',
  'source',
  'method',
  'path',
  'status',
  'bytes',
  'user_agent',
  'kind',
  'verified',
  'dedupe_key',
];
const sqlite = database ? openSqlite(database) : null;
const insert = sqlite?.prepare(
  `insert into interactions (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`,
);
type Line = Record<string, unknown>;
const write = sqlite?.transaction((rows: Line[]) => {
  for (const o of rows)
    insert!.run(
      new Date(Number(o.EdgeStartTimestamp) / 1e6).toISOString(),
      'cloudflare',
      o.ClientRequestMethod,
      o.ClientRequestPath,
      o.EdgeResponseStatus,
      o.EdgeResponseBytes,
      o.ClientRequestUserAgent,
      'human',
      0,
      `cloudflare:${String(o.RayID)}`,
    );
});

const started = performance.now();
const decoder = new StringDecoder('utf8');
let rest = '';
let lines = 0;
let batch: Line[] = [];
const take = (line: string) => {
  const o = JSON.parse(line) as Line;
  lines++;
  if (!write) return;
  batch.push(o);
  if (batch.length >= 5000) {
    write(batch);
    batch = [];
  }
};
const stream = fs
  .createReadStream(file, { highWaterMark: 256 * 1024 })
  .pipe(zlib.createGunzip({ chunkSize: 256 * 1024 }));
for await (const chunk of stream) {
  const parts = (rest + decoder.write(chunk as Buffer)).split('\n');
  rest = parts.pop()!;
  for (const line of parts) if (line !== '') take(line);
}
if (rest !== '') take(rest);
if (write && batch.length > 0) write(batch);
const ms = performance.now() - started;
sqlite?.close();
console.log(JSON.stringify({ lines, ms }));
