/**
 * `node build/bench/run.js feed-hostile`: the API beside a sync reading a hostile feed (issue
 * 20, CONTRACT part 8: no API request waits more than 100 ms behind a sync). One `serve` in a
 * child process; a local feed server in this process serves, in turn, a JSON feed of 2,000
 * items where every fifth is nested 20,000 deep and some hold a 1.5 MB text (about 40 MB), and
 * a CSV with one 200 MB quoted field. While each syncs, requests of `GET /v1/products?limit=1`
 * go one after another; their latency (p50, p99, max) is printed beside the same loop with no
 * sync running, with the server's peak RSS. Then a first sync of 30,000 plain new products
 * (`FEED_HOSTILE_ITEMS`), whose final apply is one long transaction: on SQLite the API's
 * reads used to wait for all of it.
 * Target: p99 under 100 ms during the syncs on a quiet machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Benchmark } from './benchmark.js';
import { runCli, scratchDir, startAgentshelf, unlimitedKey } from './support.js';

const MB = 1024 * 1024;

function hostileJson(): Buffer {
  const parts: string[] = [];
  for (let i = 1; i <= 2000; i++) {
    const item = {
      id: `SKU-${i}`,
      title: `Product ${i}`,
      price: '19.99 USD',
      link: `https://shop.example.com/p/${i}`,
      availability: 'in_stock',
    };
    if (i % 5 === 0) parts.push('['.repeat(20_000) + ']'.repeat(20_000));
    else if (i % 97 === 0)
      parts.push(JSON.stringify({ ...item, description: 'z'.repeat(1.5 * MB) }));
    else parts.push(JSON.stringify(item));
  }
  return Buffer.from(`[${parts.join(',')}]`);
}

/** A JSONL feed of `count` plain new products. */
function plainJsonl(count: number): Buffer {
  const lines: string[] = [];
  for (let i = 1; i <= count; i++)
    lines.push(
      JSON.stringify({
        id: `PLAIN-${i}`,
        title: `Plain product ${i}`,
        description: `The plain product number ${i}.`,
        price: '9.99 USD',
        link: `https://shop.example.com/plain/${i}`,
        availability: 'in_stock',
      }),
    );
  return Buffer.from(lines.join('\n') + '\n');
}

const PLAIN_ITEMS = Number(process.env.FEED_HOSTILE_ITEMS ?? 30_000);

async function startFeeds() {
  const json = hostileJson();
  const plain = plainJsonl(PLAIN_ITEMS);
  const block = Buffer.alloc(64 * 1024, 'x');
  const server = http.createServer((req, res) => {
    if (req.url === '/hostile.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(json);
    }
    if (req.url === '/plain.jsonl') {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      return void res.end(plain);
    }
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.write(
      'id,title,price,link,availability\nA,"A",1.00 USD,https://shop.example.com/p/A,in_stock\n',
    );
    res.write('B,"');
    let sent = 0;
    const pump = () => {
      while (sent < 200 * MB) {
        sent += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
      res.end('",1.00 USD,https://shop.example.com/p/B,in_stock\n');
    };
    res.on('close', () => (sent = Infinity));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function describe(latencies: number[] & { failed?: number }): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(1);
  const failed = latencies.failed ? `, ${latencies.failed} failed` : '';
  return `${sorted.length} requests, p50 ${f(quantile(sorted, 0.5))} ms, p99 ${f(quantile(sorted, 0.99))} ms, max ${f(sorted.at(-1) ?? 0)} ms${failed}`;
}

async function run(): Promise<void> {
  const dir = scratchDir('feed-hostile');
  const env = {
    DATA_DIR: dir,
    PUBLIC_DIR: path.join(dir, 'public'),
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
  };
  runCli(['migrate'], env);
  const key = unlimitedKey(env, 'admin', 'bench');
  const feeds = await startFeeds();
  const server = await startAgentshelf(env);
  const api = server.match[1]!;
  const call = async (method: string, url: string, body?: unknown) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(api + url, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      } catch (err) {
        // A keep-alive connection the server closed after a long stall: once more.
        if (method !== 'GET' || attempt >= 3) throw err;
      }
    }
  };
  /**
   * Requests one after another until `until` resolves; their latencies in ms (a request that
   * failed counts, with its time, and is named at the end of the line).
   */
  const loop = async (until: Promise<unknown>) => {
    let done = false;
    void until.finally(() => (done = true));
    const latencies: number[] & { failed?: number } = [];
    while (!done) {
      const started = performance.now();
      try {
        const res = await fetch(`${api}/v1/products?limit=1`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await res.arrayBuffer();
        if (res.status !== 200) latencies.failed = (latencies.failed ?? 0) + 1;
      } catch {
        // A keep-alive connection the server closed after a long stall (ECONNRESET).
        latencies.failed = (latencies.failed ?? 0) + 1;
      }
      latencies.push(performance.now() - started);
    }
    return latencies;
  };
  try {
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    console.log(`quiet: ${describe(await loop(wait(3000)))}`);
    for (const [name, url, settings] of [
      ['hostile JSON (40 MB, nested 20,000 deep, 1.5 MB texts)', '/hostile.json', {}],
      ['one 200 MB quoted CSV field', '/huge.csv', { max_bytes: 300 * MB }],
      [`a first sync of ${PLAIN_ITEMS.toLocaleString('en')} new products`, '/plain.jsonl', {}],
    ] as const) {
      const created = await call('POST', '/v1/integrations', {
        platform: 'feed',
        settings: { url: feeds.origin + url, ...settings },
      });
      if (created.status !== 201) throw new Error(`create: ${JSON.stringify(created.body)}`);
      const id = created.body.id as string;
      const began = performance.now();
      const started = await call('POST', `/v1/integrations/${id}/sync`);
      if (started.status !== 202) throw new Error(`sync: ${JSON.stringify(started.body)}`);
      const finished = (async () => {
        for (;;) {
          await wait(200);
          const status = await call('GET', `/v1/integrations/${id}/sync/status`);
          if (status.body.status !== 'running') return status.body.last;
        }
      })();
      const latencies = await loop(finished);
      const last = (await finished) as Record<string, unknown> | null;
      console.log(`${name}: ${describe(latencies)}`);
      console.log(
        `  sync ${String(last?.status)} in ${((performance.now() - began) / 1000).toFixed(1)} s: ` +
          `fetched ${String(last?.fetched)}, created ${String(last?.created)}, failed ${String(last?.failed)}`,
      );
    }
    console.log(
      `serve peak RSS ${server.peakRssMb()} MB (target: p99 under 100 ms during the syncs)`,
    );
  } finally {
    await server.stop();
    await feeds.close();
  }
}

export const feedHostileBenchmark: Benchmark = {
  title: 'the API beside syncs of hostile feeds (event-loop lag, issue 20)',
  run,
};
