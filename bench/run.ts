/**
 * `make bench`: runs every benchmark (or those named: `node build/bench/run.js api pipeline`).
 * Each prints its own figures beside a baseline measured in the same run, and the ratio.
 * Those marked onlyByName (the 30-minute soak) run only when named.
 */
import { benchmarks } from './registry.js';

const names = process.argv.slice(2);
const chosen = names.length
  ? names
  : Object.keys(benchmarks).filter((name) => !benchmarks[name]!.onlyByName);
for (const name of chosen) {
  const bench = benchmarks[name];
  if (!bench) {
    console.error(`unknown benchmark '${name}'; known: ${Object.keys(benchmarks).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== ${name}: ${bench.title}`);
  await bench.run();
}
