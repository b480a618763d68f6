/**
 * The processes of bench/platform-sources.ts, run with child_process.fork, each replying over
 * IPC:
 * - `server shopify|woocommerce N`: the local platform with N synthetic products (answers
 *   `{origin}` and serves until killed);
 * - `read MODE ORIGIN`: the platform source reads the whole catalogue (items, ms, peak RSS);
 * - `floor MODE ORIGIN`: the baseline, a bare loop that fetches the same pages (or JSONL) and
 *   parses them, counting the same items, with nothing else.
 * MODE: shopify-paged, shopify-bulk, storefront, woocommerce.
 */
import http from 'node:http';
import { shopifySource, PRODUCTS_QUERY, SHOPIFY_PAGE_SIZE } from '../src/platforms/shopify.js';
import { BULK_QUERY } from '../src/platforms/shopify-bulk.js';
import { woocommerceSource } from '../src/platforms/woocommerce.js';
import { startShopifyServer } from '../test/support/shopify-server.js';
import { startWooServer } from '../test/support/woocommerce-server.js';
import { sourceHarness } from '../test/support/source-context.js';
import { peakRssMb } from './webhooks-peers.js';

export const MODES = ['shopify-paged', 'shopify-bulk', 'storefront', 'woocommerce'] as const;
export type Mode = (typeof MODES)[number];

const TOKEN = 'shpat_local_test_token';
const WOO = { consumer_key: 'ck_local_test_key', consumer_secret: 'cs_local_test_secret' };
const WOO_AUTH = `Basic ${Buffer.from(`${WOO.consumer_key}:${WOO.consumer_secret}`).toString('base64')}`;
const agent = new http.Agent({ keepAlive: true });

function request(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function graphql(origin: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await request(
    'POST',
    `${origin}/admin/api/2026-10/graphql.json`,
    { 'content-type': 'application/json', 'x-shopify-access-token': TOKEN },
    JSON.stringify({ query, variables }),
  );
  return JSON.parse(res.body) as { data: GraphqlData };
}

/** What the floor reads of the answers, typed loosely (it trusts the local server). */
interface GraphqlData {
  products: {
    nodes: { variants: { nodes: unknown[] } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
  currentBulkOperation: { status: string; url: string | null };
}

/** The bare loop: the same pages, parsed, items counted. */
async function floor(mode: Mode, origin: string): Promise<number> {
  let items = 0;
  if (mode === 'shopify-paged') {
    let after: string | null = null;
    for (;;) {
      const { data } = await graphql(origin, PRODUCTS_QUERY, { first: SHOPIFY_PAGE_SIZE, after });
      for (const p of data.products.nodes) items += p.variants.nodes.length;
      if (!data.products.pageInfo.hasNextPage) return items;
      after = data.products.pageInfo.endCursor;
    }
  }
  if (mode === 'shopify-bulk') {
    await graphql(
      origin,
      'mutation Run($q: String!) { bulkOperationRunQuery(query: $q) { bulkOperation { id } userErrors { message } } }',
      { q: BULK_QUERY },
    );
    let url: string | null = null;
    while (!url)
      url = (await graphql(origin, '{ currentBulkOperation { status url } }')).data
        .currentBulkOperation.url;
    await new Promise<void>((resolve, reject) => {
      http.get(url!, { agent }, (res) => {
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop()!;
          for (const line of lines)
            if (line && JSON.parse(line).id.includes('/ProductVariant/')) items++;
        });
        res.on('end', resolve);
        res.on('error', reject);
      });
    });
    return items;
  }
  if (mode === 'storefront') {
    for (let page = 1; ; page++) {
      const res = await request('GET', `${origin}/products.json?limit=250&page=${page}`, {});
      const { products } = JSON.parse(res.body) as { products: { variants: unknown[] }[] };
      for (const p of products) items += p.variants.length;
      if (products.length < 250) return items;
    }
  }
  for (let page = 1; ; page++) {
    const res = await request('GET', `${origin}/wp-json/wc/v3/products?per_page=100&page=${page}`, {
      authorization: WOO_AUTH,
    });
    const products = JSON.parse(res.body) as { id: number; type: string }[];
    for (const p of products) {
      if (p.type !== 'variable') {
        items++;
        continue;
      }
      const v = await request(
        'GET',
        `${origin}/wp-json/wc/v3/products/${p.id}/variations?per_page=100&page=1`,
        { authorization: WOO_AUTH },
      );
      items += (JSON.parse(v.body) as unknown[]).length;
    }
    if (page >= Number(res.headers['x-wp-totalpages'])) return items;
  }
}

async function read(mode: Mode, origin: string): Promise<number> {
  const h = sourceHarness({
    shopDomain: new URL(origin).host,
    credentials:
      mode === 'woocommerce' ? WOO : mode === 'storefront' ? null : { access_token: TOKEN },
    settings: { bulk_threshold: mode === 'shopify-bulk' ? 0 : 1e9, bulk_poll_seconds: 0 },
  });
  const source = mode === 'woocommerce' ? woocommerceSource : shopifySource;
  let items = 0;
  for await (const item of source.items(h.ctx)) if (item.kind === 'product') items++;
  return items;
}

async function main(): Promise<void> {
  const [role, a, b] = process.argv.slice(2);
  if (role === 'server') {
    const n = Number(b);
    const server =
      a === 'woocommerce'
        ? await startWooServer({ products: n })
        : await startShopifyServer({
            products: n,
            maximumAvailable: 1e9,
            restoreRate: 1e9,
            bulkPolls: 1,
          });
    process.send!({ origin: server.origin });
    return;
  }
  const started = performance.now();
  const items = role === 'read' ? await read(a as Mode, b!) : await floor(a as Mode, b!);
  process.send!({ items, ms: performance.now() - started, peakRssMb: peakRssMb() });
  process.exit(0);
}

if (process.send) await main();
