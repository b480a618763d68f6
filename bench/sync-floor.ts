/**
 * The sync's floor, run as its own process by bench/sync.ts: a bare loop that reads the same
 * JSONL feed over HTTP, parses each line (JSON.parse), turns it into a products row (price to
 * minor units, images and attributes as JSON) and inserts it with one prepared statement, 500
 * rows a transaction, into a store migrated like the real one. No validation, no mapping, no
 * events, no comparison: what any sync must at least do. Prints {products, ms, peak_rss_bytes}.
 *
 * Usage: node build/bench/sync-floor.js <sqlite file> <feed url>
 */
import http from 'node:http';
import readline from 'node:readline';
import type SQLite from 'better-sqlite3';
import { openSqlite } from '../src/db/sqlite/connection.js';

const [file, url] = process.argv.slice(2);
if (!file || !url) {
  console.error('usage: sync-floor <sqlite file> <feed url>');
  process.exit(2);
}
const sqlite: SQLite.Database = openSqlite(file);
const insert = sqlite.prepare(
  `insert into products (id, name, description, price_minor, currency, status, category, images, attributes, brand, created_at, updated_at)
   values (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)`,
);
const started = performance.now();
const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
  http.get(url, resolve).on('error', reject),
);
const lines = readline.createInterface({ input: res, crlfDelay: Infinity });
let batch: unknown[][] = [];
let products = 0;
const flush = sqlite.transaction((rows: unknown[][]) => {
  for (const row of rows) insert.run(...row);
});
const stamp = new Date().toISOString();
for await (const line of lines) {
  if (!line) continue;
  const p = JSON.parse(line) as Record<string, string>;
  const [amount, currency] = p.price!.split(' ');
  batch.push([
    `floor_${p.id}`,
    p.title,
    p.description,
    Math.round(Number(amount) * 100),
    currency,
    p.product_category,
    JSON.stringify([p.image_link]),
    JSON.stringify({ brand: p.brand, url: p.link, item_group_id: p.item_group_id }),
    p.brand,
    stamp,
    stamp,
  ]);
  products++;
  if (batch.length === 500) {
    flush(batch);
    batch = [];
  }
}
if (batch.length) flush(batch);
const ms = performance.now() - started;
sqlite.close();
console.log(
  JSON.stringify({ products, ms, peak_rss_bytes: process.resourceUsage().maxRSS * 1024 }),
);
