/**
 * The pipeline's floor, run as its own process by bench/pipeline.ts: a bare loop over
 * better-sqlite3 iterate() on the rows a whole-catalogue feed selects (the very statement
 * Kysely compiles for it), writing one JSON.stringify line per row to a file, honouring
 * backpressure. Prints {products, ms, peak_rss_bytes}.
 *
 * Usage: node build/bench/pipeline-floor.js <sqlite file> <output file>
 */
import fs from 'node:fs';
import { once } from 'node:events';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { openSqlite } from '../src/db/sqlite/connection.js';
import type { Database } from '../src/db/schema.js';
import { selectFeedProducts } from '../src/db/queries/feeds.js';

const [file, output] = process.argv.slice(2);
if (!file || !output) {
  console.error('usage: pipeline-floor <sqlite file> <output file>');
  process.exit(2);
}
const sqlite: SQLite.Database = openSqlite(file, { readonly: true });
const compiled = selectFeedProducts(
  new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }),
  { id: 'floor', has_product_list: 0, filter_category: null, filter_status: null },
).compile();
const out = fs.createWriteStream(output, { highWaterMark: 1 << 20 });
const started = performance.now();
let products = 0;
for (const row of sqlite.prepare(compiled.sql).iterate(...(compiled.parameters as unknown[]))) {
  products++;
  if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
}
out.end();
await once(out, 'close');
const ms = performance.now() - started;
sqlite.close();
console.log(
  JSON.stringify({ products, ms, peak_rss_bytes: process.resourceUsage().maxRSS * 1024 }),
);
