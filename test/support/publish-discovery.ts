/**
 * Runs the discovery stage once in its own process, as `agentshelf build` would, with the
 * settings of the environment; prints the stage's summary. Tests use it to check that a
 * server notices a publication made by another process.
 */
import { pino } from 'pino';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/store.js';

const config = loadConfig();
const store = openStore(config);
const reader = store.openReader();
try {
  const result = await publishDiscovery({
    db: store.db,
    reader,
    config,
    logger: pino({ level: 'silent' }),
    now: () => new Date(),
  });
  console.log(JSON.stringify(result));
  process.exitCode = result.failures.length ? 1 : 0;
} finally {
  await reader.destroy();
  await store.close();
}
