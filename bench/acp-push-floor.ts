/**
 * The ACP push's floor, run as its own process by bench/channels-delivery.ts: the lines of an
 * `acp` JSON Lines file read with readline, put in the batches our push makes (at most
 * BATCH_PRODUCTS products and BATCH_BYTES of lines), each sent as
 * `PATCH {url}/feeds/{feed_id}/products` with a plain http.request on a keep-alive agent and
 * awaited, its answer read and checked for `accepted: true`. No address guard, no retry, no
 * size cap, no record. Prints {products, batches, bytes, ms}.
 *
 * Usage: node build/bench/acp-push-floor.js <jsonl file> <url> <feed id> <token>
 */
import fs from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';
import { BATCH_BYTES, BATCH_PRODUCTS } from '../src/platforms/acp-feed-api.js';

const [file, base, feedId, token] = process.argv.slice(2);
if (!file || !base || !feedId || !token) {
  console.error('usage: acp-push-floor <jsonl file> <url> <feed id> <token>');
  process.exit(2);
}
const url = new URL(`${base.replace(/\/+$/, '')}/feeds/${encodeURIComponent(feedId)}/products`);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function patch(body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'PATCH',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const started = performance.now();
let products = 0;
let batches = 0;
let bytes = 0;
let batch: string[] = [];
let batchBytes = 0;
const flush = async () => {
  if (batch.length === 0) return;
  const body = `{"products":[${batch.join(',')}]}`;
  const answer = JSON.parse(await patch(body)) as { accepted?: unknown };
  if (answer.accepted !== true) throw new Error(`batch ${batches + 1} not accepted`);
  products += batch.length;
  batches++;
  bytes += Buffer.byteLength(body);
  batch = [];
  batchBytes = 0;
};
const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
for await (const line of lines) {
  if (line === '') continue;
  const size = Buffer.byteLength(line) + 1;
  if (batch.length === BATCH_PRODUCTS || (batch.length > 0 && batchBytes + size > BATCH_BYTES)) {
    await flush();
  }
  batch.push(line);
  batchBytes += size;
}
await flush();
const ms = performance.now() - started;
agent.destroy();
console.log(JSON.stringify({ products, batches, bytes, ms }));
