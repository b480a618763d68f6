/**
 * The other processes of bench/webhooks.ts, run with child_process.fork:
 * - `receivers N`: N webhook receivers on 127.0.0.1 that read each body and answer 200,
 *   counting requests and the times of the first and the last;
 * - `loop`: the baseline, a bare loop that POSTs the same bodies with the same concurrency
 *   (one connection, one request at a time, per receiver): the transport ceiling.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A product as the API returns it (about 600 bytes of JSON), the data of bench event i. */
export function sampleProduct(i: number): Record<string, unknown> {
  const id = `bench_${String(i).padStart(8, '0')}`;
  return {
    id,
    name: `Trail Runner ${i} – lightweight, breathable mesh`,
    description:
      'A neutral running shoe for mixed terrain: grippy outsole, rock plate, gusseted tongue & a 6 mm drop.',
    price: 79.99 + (i % 100),
    currency: 'USD',
    status: 'active',
    category: 'Apparel > Shoes > Running',
    images: [`https://img.example.com/${id}/1.jpg`, `https://img.example.com/${id}/2.jpg`],
    attributes: {
      brand: `Brand ${i % 40}`,
      features: ['Breathable mesh', 'Rock plate', 'Recycled laces'],
      gtin: '00012345678905',
      item_group_id: `grp_${i % 1000}`,
    },
    created_at: '2026-11-21T10:00:00.000Z',
    updated_at: '2026-11-21T10:00:00.000Z',
  };
}

/** VmHWM (peak resident set) of this process in MB, from /proc; NaN where there is none. */
export function peakRssMb(pid: number | 'self' = 'self'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function runReceivers(count: number): void {
  let received = 0;
  let first = 0;
  let last = 0;
  const servers: http.Server[] = [];
  const ports: number[] = [];
  let listening = 0;
  for (let i = 0; i < count; i++) {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const now = Date.now();
        if (received === 0) first = now;
        received++;
        last = now;
        res.writeHead(200, { 'Content-Length': '0' });
        res.end();
      });
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1', () => {
      ports[i] = (server.address() as AddressInfo).port;
      if (++listening === count) process.send!({ ports });
    });
    servers.push(server);
  }
  process.on('message', (message: string) => {
    if (message === 'stats') process.send!({ received, first, last });
    if (message === 'reset') {
      received = first = last = 0;
      process.send!({ received });
    }
    if (message === 'exit') {
      for (const s of servers) s.closeAllConnections();
      process.exit(0);
    }
  });
}

/** POSTs n bodies to one port, one at a time over one kept-alive connection. */
async function postAll(port: number, n: number, headers: Record<string, string>) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({
      event: 'product.updated',
      data: sampleProduct(i),
      timestamp: '2026-11-21T10:00:00.000Z',
    });
    await new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/hook',
          agent,
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error('not 200'))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  agent.destroy();
}

function runLoop(): void {
  process.on('message', (message: { ports: number[]; perReceiver: number }) => {
    // The same header set as a delivery, with placeholder values of the same length.
    const hex = 'f'.repeat(64);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'agentshelf/0.1.0',
      'X-Webhook-Id': `evt_${'x'.repeat(20)}`,
      'X-Webhook-Timestamp': '1795255200',
      'X-Webhook-Signature': hex,
      'Webhook-Signature': `t=1795255200,v1=${hex}`,
    };
    const started = performance.now();
    const cpu = process.cpuUsage();
    Promise.all(message.ports.map((port) => postAll(port, message.perReceiver, headers))).then(
      () => {
        const used = process.cpuUsage(cpu);
        process.send!({
          ms: performance.now() - started,
          peakRssMb: peakRssMb(),
          cpuUs: used.user + used.system,
        });
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'receivers') runReceivers(Number(process.argv[3] ?? 5));
  else if (process.argv[2] === 'loop') runLoop();
  else {
    console.error('usage: webhooks-peers.js receivers N | loop');
    process.exit(2);
  }
}
