/**
 * One report generated in a process of its own (the `reports` benchmark's child): opens the
 * store, runs the report worker until the given report is ready, and prints what it cost.
 *
 *   node build/bench/reports-generate.js REPORT_ID   (DATA_DIR from the environment)
 */
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { findReportById } from '../src/db/queries/reports.js';
import { analyticsReportSources } from '../src/domain/reports/analytics-source.js';
import { ReportWorker } from '../src/reports/worker.js';

const id = process.argv[2]!;
const config = loadConfig(process.env);
const store = openStore(config);
const worker = new ReportWorker({
  store,
  dataDir: config.DATA_DIR,
  storeName: config.STORE_NAME,
  currency: config.DEFAULT_CURRENCY,
  logger: pino({ level: 'warn' }),
  now: () => new Date(),
  sources: analyticsReportSources({
    currency: config.DEFAULT_CURRENCY,
    storeName: config.STORE_NAME,
  }),
  pollMs: 5,
});
const started = performance.now();
await worker.start();
for (;;) {
  const row = await findReportById(store.db, id);
  if (row && row.status !== 'pending') {
    const ms = performance.now() - started;
    await worker.stop();
    await store.close();
    console.log(
      JSON.stringify({
        status: row.status,
        failure_reason: row.failure_reason,
        bytes: Number(row.bytes),
        ms,
        peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      }),
    );
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
