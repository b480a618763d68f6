import { loadConfig } from '../config.js';
import { describeLocation } from '../db/store.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';
import { VERSION } from '../version.js';
import { parseVerbArgs } from './args.js';

export const serveHelp = `Usage: agentshelf serve

Serves the platform API on HOST:PORT (default 127.0.0.1:8080) and the discovery registry
(PUBLIC_DIR) on HOST:FEEDS_PORT (default 8081). Migrates the store first.
On the first start with no API key in the store, creates an admin key and prints it once.
Runs the webhook delivery worker (one serve process per store delivers webhooks), and the
pipeline on FEEDS_CRON, when products or feeds change (at once after FEEDS_DEBOUNCE_MS of
quiet, else gathered over it), and at start when the published output is stale (never two runs at once, also with \`build\`).
SIGTERM or SIGINT: stop accepting, finish requests and webhook attempts in flight, abort a
pipeline run in progress (published files stay whole), close the store, exit.
Integrations sync on SYNC_CRON (default hourly); a sync a killed process left running is
marked failed at start. A sync under way at shutdown is stopped and recorded as failed.

Settings come from the environment: see docs/configuration.md.`;

export async function runServe(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, {});
  if (values.help) {
    console.log(serveHelp);
    return 0;
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const server = await startServer(config, {
    logger,
    createFirstAdminKey: true,
    pipeline: true,
    syncSchedule: true,
  });
  // One write, so a reader of the output never sees the banner without the key.
  const banner = [
    `agentshelf ${VERSION} (${config.ENVIRONMENT}) serving the platform API at ${server.url}`,
    `  discovery registry: ${server.discovery.url}/v1/index.json`,
    `  store: ${describeLocation(server.store.location)}`,
    `  pipeline: on "${config.FEEDS_CRON}", on changes (gathered over ${config.FEEDS_DEBOUNCE_MS} ms after the first); feeds in ${config.DATA_DIR}/feeds, registry in ${config.PUBLIC_DIR}`,
    `  integrations: syncs on "${config.SYNC_CRON}"`,
    `  OpenAPI document: ${server.url}/v1/openapi.json`,
    `  dashboard: ${server.url}/dashboard (sign in with an API key)`,
  ];
  if (server.firstAdminKey) {
    banner.push(
      '',
      '  No API key existed, so an admin key was created. It is shown this once:',
      '',
      `    ${server.firstAdminKey}`,
      '',
      `  Try: curl -H "Authorization: Bearer ${server.firstAdminKey}" ${server.url}/v1/products`,
      `  Or open the dashboard, ${server.url}/dashboard, and sign in with this key.`,
    );
  }
  process.stdout.write(`${banner.join('\n')}\n`);
  logger.info({ url: server.url, environment: config.ENVIRONMENT, version: VERSION }, 'serving');

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down: finishing requests in flight');
      server.close().then(resolve, (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  logger.info('stopped');
  logger.flush();
  return 0;
}
