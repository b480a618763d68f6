/**
 * The platform API with its report worker, in a child process a test can SIGKILL: the same
 * startServer as `serve`, without the pipeline (a test of reports does not wait for a
 * publication of the catalogue). Prints the URL on its first line of stdout.
 *
 *   node build/test/support/report-server.js   (DATA_DIR, PUBLIC_DIR from the environment)
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';

const config = loadConfig({ ...process.env, PORT: '0', FEEDS_PORT: '0', HOST: '127.0.0.1' });
const server = await startServer(config, { logger: pino({ level: 'silent' }) });
process.stdout.write(`${server.url}\n`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
