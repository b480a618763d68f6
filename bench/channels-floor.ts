/**
 * The channel profiles' floor, run as its own process by bench/channels.ts: a bare loop over
 * better-sqlite3 iterate() on the rows a whole-catalogue feed selects (the statement Kysely
 * compiles for it), one JSON.stringify line per row, gzipped (level 3, as feeds are) to a
 * file, honouring backpressure. Prints {products, ms, peak_rss_bytes}.
 *
 * Usage: node build/bench/channels-floor.js <sqlite file> <output file>
 */
import fs from 'node:fs';
import { once } from 'node:events';
import zlib from 'node:zlib';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { openSqlite } from '../src/db/sqlite/connection.js';
import type { Database } from '../src/db/schema.js';
import { selectFeedProducts } from '../src/db/queries/feeds.js';

const [file, output] = process.argv.slice(2);
if (!file || !output) {
  console.error('usage: channels-floor <sqlite file> <output file>');
  process.exit(2);
}
const sqlite: SQLite.Database = openSqlite(file, { readonly: true });
const compiled = selectFeedProducts(
  new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
  { id: 'floor', has_product_list: 0, filter_category: null, filter_status: null },
).compile();
const gzip = zlib.createGzip({ level: 3 });
const out = fs.createWriteStream(output, { highWaterMark: 1 << 20 });
gzip.pipe(out);
const started = performance.now();
let products = 0;
let page = '';
for (const row of sqlite.prepare(compiled.sql).iterate(...(compiled.parameters as unknown[]))) {
  products++;
  page += `${JSON.stringify(row)}\n`;
  // One write per 1,000 rows, as the pipeline writes a page at a time.
  if (products % 1000 === 0) {
    if (!gzip.write(page)) await once(gzip, 'drain');
    page = '';
  }
}
gzip.end(page);
await once(out, 'close');
const ms = performance.now() - started;
sqlite.close();
console.log(
  JSON.stringify({ products, ms, peak_rss_bytes: process.resourceUsage().maxRSS * 1024 }),
);
