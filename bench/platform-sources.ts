/**
 * `node build/bench/run.js sources`: the Shopify and WooCommerce sources read N synthetic
 * products from the local platforms (test/support, each in a process of its own) through
 * every path: Admin GraphQL paging, a bulk operation's JSONL, the storefront's /products.json,
 * WooCommerce's REST pages with variations. Each beside a floor measured in the same run: a
 * bare loop fetching and parsing the same answers. Items/s and the reader's peak RSS, at
 * 10,000 and 100,000 products to show the memory does not grow with the catalogue.
 * SOURCES_BENCH_PRODUCTS=10000,100000 (default) picks the sizes, SOURCES_BENCH_MODES the paths.
 * (The sync benchmark, with the database writes, is the integrations core's.)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Benchmark } from './benchmark.js';
import { MODES, type Mode } from './platform-peers.js';

const PEERS = fileURLToPath(new URL('./platform-peers.js', import.meta.url));

interface Result {
  items: number;
  ms: number;
  peakRssMb: number;
}

function runPeer<T>(args: string[]): { child: ChildProcess; reply: Promise<T> } {
  const child = fork(PEERS, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const reply = new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return { child, reply };
}

export const platformSourcesBenchmark: Benchmark = {
  title: 'Shopify and WooCommerce sources against the local platforms, beside a bare parse loop',
  async run() {
    const sizes = (process.env.SOURCES_BENCH_PRODUCTS ?? '10000,100000').split(',').map(Number);
    const modes = (process.env.SOURCES_BENCH_MODES?.split(',') ?? MODES) as Mode[];
    console.log(
      'path           products    items  source items/s  floor items/s  ratio  peak RSS MB (source / floor)',
    );
    for (const n of sizes) {
      for (const mode of modes) {
        const platform = mode === 'woocommerce' ? 'woocommerce' : 'shopify';
        const server = runPeer<{ origin: string }>(['server', platform, String(n)]);
        const { origin } = await server.reply;
        try {
          const floor = await runPeer<Result>(['floor', mode, origin]).reply;
          const source = await runPeer<Result>(['read', mode, origin]).reply;
          if (source.items !== floor.items)
            throw new Error(
              `${mode}: the source read ${source.items} items, the floor ${floor.items}`,
            );
          const rate = (r: Result) => Math.round(r.items / (r.ms / 1000));
          console.log(
            [
              mode.padEnd(14),
              String(n).padStart(8),
              String(source.items).padStart(8),
              String(rate(source)).padStart(15),
              String(rate(floor)).padStart(14),
              (rate(source) / rate(floor)).toFixed(2).padStart(6),
              `${source.peakRssMb.toFixed(0)} / ${floor.peakRssMb.toFixed(0)}`.padStart(14),
            ].join(' '),
          );
        } finally {
          server.child.kill();
        }
      }
    }
  },
};
