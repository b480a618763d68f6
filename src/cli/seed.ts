import { loadConfig } from '../config.js';
import { openStore } from '../db/store.js';
import { migrateToLatest } from '../db/migrate.js';
import { countProducts } from '../db/queries/products.js';
import { seedDemo } from '../seed/demo.js';
import { seedSynthetic } from '../seed/synthetic.js';
import { intFlag, parseVerbArgs, UsageError } from './args.js';

export const seedHelp = `Usage: agentshelf seed --demo [--if-empty] | --synthetic N [--brands B]

  --demo          Writes a small, realistic catalogue: 4 brands, about 60 products in
                  2-3 level categories, variants grouped by attributes.item_group_id,
                  images and GTINs. Each product records its product.created event.
                  Also sixty days of analytics ending today (agent traffic, views,
                  clicks, conversions), the same numbers on any date.
  --if-empty      With --demo: do nothing when the store already has products.
  --synthetic N   Adds N generated products (ids syn_00000000...) over B brands
                  (default 1000), for benchmarks. These record no events.
  --json          Prints {"seeded": N} instead of a sentence.`;

export async function runSeed(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, {
    demo: { type: 'boolean' },
    'if-empty': { type: 'boolean' },
    synthetic: { type: 'string' },
    brands: { type: 'string' },
  });
  if (values.help) {
    console.log(seedHelp);
    return 0;
  }
  if (!values.demo === (values.synthetic === undefined)) {
    throw new UsageError('seed needs exactly one of --demo or --synthetic N');
  }
  const config = loadConfig();
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    let seeded = 0;
    if (values.demo) {
      if (values['if-empty'] && (await countProducts(store.db, {})) > 0) {
        if (!values.json) console.log('the store already has products: demo catalogue not seeded');
      } else {
        seeded = await seedDemo(store.db, { currency: config.DEFAULT_CURRENCY });
        if (!values.json) console.log(`seeded the demo catalogue: ${seeded} products`);
      }
    } else {
      const count = intFlag(values.synthetic, 'synthetic', 1)!;
      const brands = intFlag(values.brands, 'brands', 1);
      const started = performance.now();
      const tty = process.stderr.isTTY;
      seeded = await seedSynthetic(store.db, {
        count,
        ...(brands ? { brands } : {}),
        onProgress: (n) => {
          if (tty) {
            const rate = n / ((performance.now() - started) / 1000);
            process.stderr.write(
              `\r  ${n.toLocaleString('en')} / ${count.toLocaleString('en')} products, ${Math.round(rate).toLocaleString('en')}/s   `,
            );
          }
        },
      });
      if (tty) process.stderr.write('\n');
      const seconds = (performance.now() - started) / 1000;
      if (!values.json)
        console.log(`seeded ${seeded} synthetic products in ${seconds.toFixed(1)} s`);
    }
    if (values.json) console.log(JSON.stringify({ seeded }));
    return 0;
  } finally {
    await store.close();
  }
}
