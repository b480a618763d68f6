import { apiBenchmark } from './api.js';
import { apiWritesBenchmark } from './api-writes.js';
import { limitsBenchmark } from './limits.js';
import { discoveryBenchmark } from './discovery.js';
import { webhooksBenchmark } from './webhooks.js';
import { pipelineBenchmark } from './pipeline.js';
import { distBenchmark } from './dist.js';
import { dashboardBenchmark } from './dashboard.js';
import { analyticsBenchmark } from './analytics.js';
import { analyticsImportBenchmark } from './analytics-import.js';
import { reportsBenchmark } from './reports.js';
import { syncBenchmark } from './sync.js';
import { platformSourcesBenchmark } from './platform-sources.js';
import { feedSourceBenchmark } from './feed-source.js';
import { storeCopyBenchmark } from './store-copy.js';
import { soakBenchmark } from './soak.js';
import { feedHostileBenchmark } from './feed-hostile.js';
import { publishBenchmark } from './publish.js';
import { channelsBenchmark } from './channels.js';
import { ucpBenchmark } from './ucp.js';
import type { Benchmark } from './benchmark.js';

/** Every benchmark `make bench` runs, in order. Add one line per benchmark file. */
export const benchmarks: Record<string, Benchmark> = {
  api: apiBenchmark,
  'api-writes': apiWritesBenchmark,
  limits: limitsBenchmark,
  discovery: discoveryBenchmark,
  webhooks: webhooksBenchmark,
  pipeline: pipelineBenchmark,
  dist: distBenchmark,
  dashboard: dashboardBenchmark,
  analytics: analyticsBenchmark,
  'analytics-import': analyticsImportBenchmark,
  reports: reportsBenchmark,
  sync: syncBenchmark,
  sources: platformSourcesBenchmark,
  'feed-source': feedSourceBenchmark,
  'store-copy': storeCopyBenchmark,
  soak: soakBenchmark,
  'feed-hostile': feedHostileBenchmark,
  publish: publishBenchmark,
  channels: channelsBenchmark,
  ucp: ucpBenchmark,
};
