import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import t from 'tap';
import { publishDiscovery } from '../../../pipeline/discovery/index.js';
import { startDiscoveryServer } from '../../../src/http/discovery/server.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { repoRoot } from '../../support/discovery.js';
import { freePort } from '../../support/nginx.js';
import { createPipelineContext, startTestStore } from '../../support/pipeline.js';

// Shopify's reference UCP CLI (@shopify/ucp-cli, MIT), run black-box against the local
// discovery server: it reads /.well-known/ucp, lists the MCP tools and calls them.

const CLI = path.join(repoRoot(), 'node_modules', '@shopify', 'ucp-cli', 'dist', 'bin.js');

t.test('ucp-cli discovers the catalog, searches and looks up', async (t) => {
  const port = await freePort();
  const business = `http://127.0.0.1:${port}`;
  const s = await startTestStore(t, { FEEDS_PORT: String(port), FEEDS_URL: business });
  await seedDemo(s.db, { currency: 'USD' }, { analytics: false });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const server = await startDiscoveryServer({
    config: s.config,
    db: s.db,
    logger: pino({ level: 'silent' }),
    port,
    recordRequests: false,
  });
  t.teardown(() => server.close());
  // The CLI's home (its caches) beside the store: a second t.testdir() would empty the first.
  const home = path.join(s.dir, 'cli-home');
  const ucp = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [CLI, ...args, '--business', business, '--format', 'json'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          UCP_HOME: path.join(home, '.ucp'),
          UCP_TEST_ALLOW_INSECURE_LOCALHOST: 'true',
          NO_COLOR: '1',
        },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    return JSON.parse(stdout) as any;
  };

  const search = await ucp('catalog', 'search', '--set', '/query=waterproof rain jacket');
  t.match(search, {
    business,
    transport: 'mcp',
    endpoint: `${business}/ucp/mcp`,
    ucp: { version: '2026-04-08', status: 'success' },
  });
  const products = search.result.products;
  t.equal(products[0].id, 'NW-RAIN', "a shopper's words find the jacket");
  t.equal(products[0].price_range.min.amount, 17999);

  const lookup = await ucp(
    'catalog',
    'lookup',
    '--set',
    '/ids/0=TW-KETTLE',
    '--set',
    '/ids/1=NW-CITY-WHITE-9',
  );
  t.same(lookup.result.products.map((p: any) => p.id).sort(), ['NW-CITY', 'TW-KETTLE']);
});
