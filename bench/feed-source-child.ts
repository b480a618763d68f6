/**
 * One measurement of bench/feed-source.ts, in a process of its own (so that its peak RSS is
 * its own). `source`: serves the file from disk on a local HTTP server and reads it through the
 * feed source, counting products. `floor`: the least a reader must do with the same bytes.
 * Prints {products, ms, peak_rss_bytes}.
 *
 * Usage: node build/bench/feed-source-child.js source|floor <file> <csv|ndjson|json|xml>
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseCsv } from 'csv-parse';
import { XMLParser } from 'fast-xml-parser';
import { pino } from 'pino';
import { feedSource } from '../src/platforms/feed.js';
import { createHttpClient } from '../src/net/http-client.js';

const [mode, file, format] = process.argv.slice(2);
if (!file || !format || (mode !== 'source' && mode !== 'floor')) {
  console.error('usage: feed-source-child source|floor <file> <csv|ndjson|json|xml>');
  process.exit(2);
}

async function source(path: string): Promise<number> {
  const size = fs.statSync(path).size;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': size });
    fs.createReadStream(path).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.${format}`;
  let products = 0;
  try {
    for await (const item of feedSource.items({
      integrationId: 'int_bench',
      shopDomain: '127.0.0.1',
      credentials: null,
      settings: { url, max_bytes: 4 * 1024 * 1024 * 1024 },
      http: createHttpClient({ allowPrivate: true }),
      defaultCurrency: 'USD',
      signal: new AbortController().signal,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
      sleep: async () => {},
      state: {},
      setState: () => {},
      saveCredentials: async () => {},
    })) {
      if (item.kind === 'product') products++;
      else if (item.kind === 'error') throw new Error(`${item.externalId}: ${item.reason}`);
    }
  } finally {
    server.close();
  }
  return products;
}

async function floor(path: string): Promise<number> {
  switch (format) {
    case 'csv': {
      let n = 0;
      for await (const _ of fs.createReadStream(path).pipe(parseCsv({ columns: true }))) n++;
      return n;
    }
    case 'ndjson': {
      let n = 0;
      for (const line of fs.readFileSync(path, 'utf8').split('\n'))
        if (line !== '' && JSON.parse(line)) n++;
      return n;
    }
    case 'json':
      return (JSON.parse(fs.readFileSync(path, 'utf8')) as { products: unknown[] }).products.length;
    default: {
      const doc = new XMLParser({ parseTagValue: false }).parse(fs.readFileSync(path, 'utf8')) as {
        rss: { channel: { item: unknown[] } };
      };
      return doc.rss.channel.item.length;
    }
  }
}

const started = performance.now();
const products = mode === 'source' ? await source(file) : await floor(file);
const ms = performance.now() - started;
console.log(
  JSON.stringify({ products, ms, peak_rss_bytes: process.resourceUsage().maxRSS * 1024 }),
);
