/**
 * The floor of `analytics import`, run as its own process by bench/analytics-import.ts: the
 * least any importer of a gzipped Cloudflare Logpush file must do: gunzip it, split it into
 * lines and JSON.parse each. Prints {lines, ms}.
 *
 * Usage: node build/bench/analytics-import-floor.js <file.ndjson.gz>
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: analytics-import-floor <file.ndjson.gz>');
  process.exit(2);
}
const started = performance.now();
const decoder = new StringDecoder('utf8');
let rest = '';
let lines = 0;
let fields = 0;
const stream = fs
  .createReadStream(file, { highWaterMark: 256 * 1024 })
  .pipe(zlib.createGunzip({ chunkSize: 256 * 1024 }));
for await (const chunk of stream) {
  const parts = (rest + decoder.write(chunk as Buffer)).split('\n');
  rest = parts.pop()!;
  for (const line of parts) {
    if (line === '') continue;
    fields += Object.keys(JSON.parse(line) as object).length > 0 ? 1 : 0;
    lines++;
  }
}
if (rest !== '') {
  JSON.parse(rest);
  lines++;
}
console.log(JSON.stringify({ lines, parsed: fields, ms: performance.now() - started }));
