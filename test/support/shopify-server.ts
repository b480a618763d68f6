import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Catalogue } from './platform-catalogue.js';
import {
  gid,
  storefrontProduct,
  syntheticShopProduct,
  type ShopProduct,
  type ShopVariant,
} from './shopify-catalogue.js';
import {
  execute,
  GraphqlError,
  parseOperation,
  requestedCost,
  type Field,
  type Page,
  type Schema,
  type Selection,
} from './graphql-lite.js';

export {
  storefrontProduct,
  syntheticShopProduct,
  webhookProduct,
  type ShopProduct,
  type ShopVariant,
} from './shopify-catalogue.js';

/**
 * A local Shopify, written from shopify.dev's documentation of what the sync uses:
 *
 * - `POST /admin/api/{version}/graphql.json` with `X-Shopify-Access-Token`: the queries are
 *   parsed and resolved field by field (an unknown field is an error, as on Shopify); cost
 *   by Shopify's rules with a leaky bucket (`extensions.cost.throttleStatus`), a query over
 *   the 1,000-point single-query limit refused with MAX_COST_EXCEEDED, one the bucket cannot
 *   pay answered HTTP 200 with a THROTTLED error; cursor paging (at most 250 a page); bulk
 *   operations (`bulkOperationRunQuery`, `currentBulkOperation`) with a JSONL file whose
 *   child lines carry `__parentId` (cut short on demand through `cutNextBulkFile`).
 * - `POST /admin/oauth/access_token`: the client-credentials grant, tokens that expire.
 * - `GET /products.json?limit=&page=` and `/meta.json`: the public storefront.
 * - Any status on demand (401, 402, 423, 429, 5xx) through `failNext`.
 *
 * Built over a Catalogue the test changes; every request is logged.
 */

export interface LoggedShopifyRequest {
  method: string;
  path: string;
  /** The GraphQL operation's name, when it had one. */
  operation: string | null;
  status: number;
  requestedCost: number | null;
  throttled: boolean;
  /** The access token sent, if any. */
  token: string | null;
  at: number;
}

export interface CannedAnswer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface ShopifyServerOptions {
  /** Milliseconds since the epoch: the bucket refills and tokens expire by it. */
  now?: () => number;
  shopName?: string;
  currency?: string;
  /** A fixed token the Admin API accepts (an app's `shpat_` token). */
  accessToken?: string;
  /** The client-credentials grant: this pair gets tokens valid `tokenTtlSeconds`. */
  clientId?: string;
  clientSecret?: string;
  tokenTtlSeconds?: number;
  maximumAvailable?: number;
  restoreRate?: number;
  /** Polls of currentBulkOperation before a bulk operation completes (default 2). */
  bulkPolls?: number;
  /** Synthetic products to start with (ids 1..n). */
  products?: number;
}

export interface BulkOperation {
  id: string;
  status: 'CREATED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  query: string;
  polls: number;
  errorCode: string | null;
}

export interface ShopifyServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  catalogue: Catalogue<ShopProduct>;
  requests: LoggedShopifyRequest[];
  /** Answers the next Admin API or token requests with these, in order. */
  failNext: CannedAnswer[];
  /** The leaky bucket: points available now (tests drain it to cause THROTTLED). */
  bucket: { available: number; readonly maximumAvailable: number; readonly restoreRate: number };
  /** Tokens issued by the grant, with their expiry (ms). */
  tokens: Map<string, number>;
  bulkOperations: BulkOperation[];
  /** The next bulk operation ends FAILED with this error code. */
  failNextBulk: string | null;
  /** The next bulk file is served without its last this many bytes (a file cut short). */
  cutNextBulkFile: number | null;
  /** The primary domain's URL (onlineStoreUrl's origin). */
  storeUrl: string;
  close(): Promise<void>;
}

/** Shopify cursors are opaque base64; this one carries the last id, as Shopify's do. */
const cursorOf = (id: number) =>
  Buffer.from(JSON.stringify({ last_id: id, last_value: String(id) })).toString('base64');
function idOfCursor(cursor: unknown): number {
  if (typeof cursor !== 'string' || cursor === '') return 0;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')) as {
      last_id?: number;
    };
    if (typeof parsed.last_id === 'number') return parsed.last_id;
  } catch {
    // fall through
  }
  throw new GraphqlError(`Invalid cursor for current pagination sort.`, 'invalidCursor');
}
const numericOf = (value: unknown) => Number(String(value).split('/').pop());

function pageSize(args: Record<string, unknown>): number {
  const first = args.first;
  if (first === null || first === undefined)
    throw new GraphqlError('you must provide one of first or last', 'argumentError');
  if (typeof first !== 'number' || first < 0 || first > 250)
    throw new GraphqlError('The first argument must be between 0 and 250', 'argumentError');
  return first;
}

function pageOf<T>(items: T[], idOf: (item: T) => number, args: Record<string, unknown>): Page {
  const first = args.first === Infinity ? Infinity : pageSize(args);
  const after = idOfCursor(args.after);
  const start = after === 0 ? 0 : items.findIndex((i) => idOf(i) > after);
  const from = start === -1 ? items.length : start;
  const nodes = items.slice(from, first === Infinity ? undefined : from + first);
  return {
    nodes,
    cursors: nodes.map((n) => cursorOf(idOf(n))),
    hasNextPage: from + nodes.length < items.length,
    hasPreviousPage: from > 0,
  };
}

function stripHtml(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .trim();
}

export async function startShopifyServer(
  options: ShopifyServerOptions = {},
): Promise<ShopifyServer> {
  const now = options.now ?? Date.now;
  const catalogue = new Catalogue(syntheticShopProduct).fill(options.products ?? 0);
  const requests: LoggedShopifyRequest[] = [];
  const maximumAvailable = options.maximumAvailable ?? 2000;
  const restoreRate = options.restoreRate ?? 100;
  const bucket = { available: maximumAvailable, maximumAvailable, restoreRate };
  let bucketAt = now();
  const tokens = new Map<string, number>();
  const staticToken = options.accessToken ?? 'shpat_local_test_token';
  const storeUrl = 'https://shop.example';

  const image = (url: string | null) => (url ? { url, altText: null } : null);
  const schema: Schema = {
    QueryRoot: {
      shop: { kind: 'object', type: 'Shop', resolve: () => ({}) },
      productsCount: {
        kind: 'object',
        type: 'Count',
        resolve: (_p, args) => countOf(catalogue.size, args.limit),
      },
      productVariantsCount: {
        kind: 'object',
        type: 'Count',
        resolve: (_p, args) => {
          let n = 0;
          for (const p of catalogue.all()) n += p.variants.length;
          return countOf(n, args.limit);
        },
      },
      products: {
        kind: 'connection',
        type: 'Product',
        resolve: (_p, args) => {
          const first = args.first === Infinity ? Infinity : pageSize(args);
          const from = catalogue.indexAfter(idOfCursor(args.after));
          const nodes: ShopProduct[] = [];
          for (let i = from; nodes.length < first && i < catalogue.size; i++)
            nodes.push(catalogue.at(i)!);
          return {
            nodes,
            cursors: nodes.map((n) => cursorOf(n.id)),
            hasNextPage: from + nodes.length < catalogue.size,
            hasPreviousPage: from > 0,
          };
        },
      },
      product: {
        kind: 'object',
        type: 'Product',
        resolve: (_p, args) => catalogue.get(numericOf(args.id)) ?? null,
      },
      currentBulkOperation: {
        kind: 'object',
        type: 'BulkOperation',
        resolve: () => {
          const op = bulkOperations.at(-1);
          if (op) pollBulk(op);
          return op ?? null;
        },
      },
      bulkOperation: {
        kind: 'object',
        type: 'BulkOperation',
        resolve: (_p, args) => {
          const op = bulkOperations.find((o) => o.id === args.id);
          if (op) pollBulk(op);
          return op ?? null;
        },
      },
    },
    Mutation: {
      bulkOperationRunQuery: {
        kind: 'object',
        type: 'BulkOperationRunQueryPayload',
        resolve: (_p, args) => startBulk(String(args.query ?? '')),
      },
    },
    Shop: {
      name: { kind: 'scalar', resolve: () => options.shopName ?? 'Local Test Shop' },
      currencyCode: { kind: 'scalar', resolve: () => options.currency ?? 'USD' },
      myshopifyDomain: { kind: 'scalar', resolve: () => 'local-test.myshopify.com' },
      primaryDomain: {
        kind: 'object',
        type: 'Domain',
        resolve: () => ({ url: storeUrl, host: new URL(storeUrl).host }),
      },
    },
    Domain: {
      url: { kind: 'scalar', resolve: (d: { url: string }) => d.url },
      host: { kind: 'scalar', resolve: (d: { host: string }) => d.host },
    },
    Count: {
      count: { kind: 'scalar', resolve: (c: { count: number }) => c.count },
      precision: { kind: 'scalar', resolve: (c: { precision: string }) => c.precision },
    },
    Product: {
      id: { kind: 'scalar', resolve: (p: ShopProduct) => gid('Product', p.id) },
      legacyResourceId: { kind: 'scalar', resolve: (p: ShopProduct) => String(p.id) },
      handle: { kind: 'scalar', resolve: (p: ShopProduct) => p.handle },
      title: { kind: 'scalar', resolve: (p: ShopProduct) => p.title },
      description: { kind: 'scalar', resolve: (p: ShopProduct) => stripHtml(p.descriptionHtml) },
      descriptionHtml: { kind: 'scalar', resolve: (p: ShopProduct) => p.descriptionHtml },
      vendor: { kind: 'scalar', resolve: (p: ShopProduct) => p.vendor },
      productType: { kind: 'scalar', resolve: (p: ShopProduct) => p.productType },
      tags: { kind: 'scalar', resolve: (p: ShopProduct) => p.tags },
      status: { kind: 'scalar', resolve: (p: ShopProduct) => p.status },
      onlineStoreUrl: {
        kind: 'scalar',
        resolve: (p: ShopProduct) =>
          p.published && p.status === 'ACTIVE' ? `${storeUrl}/products/${p.handle}` : null,
      },
      category: {
        kind: 'object',
        type: 'TaxonomyCategory',
        resolve: (p: ShopProduct) => (p.category ? { fullName: p.category } : null),
      },
      media: {
        kind: 'connection',
        type: 'MediaImage',
        resolve: (p: ShopProduct, args) =>
          pageOf(
            p.images.map((url, i) => ({ id: p.id * 1000 + i + 1, url })),
            (m) => m.id,
            args,
          ),
      },
      images: {
        kind: 'connection',
        type: 'Image',
        resolve: (p: ShopProduct, args) =>
          pageOf(
            p.images.map((url, i) => ({ id: p.id * 1000 + i + 1, url, altText: null })),
            (m) => m.id,
            args,
          ),
      },
      variants: {
        kind: 'connection',
        type: 'ProductVariant',
        resolve: (p: ShopProduct, args) => pageOf(p.variants, (v) => v.id, args),
      },
    },
    TaxonomyCategory: {
      fullName: { kind: 'scalar', resolve: (c: { fullName: string }) => c.fullName },
      name: {
        kind: 'scalar',
        resolve: (c: { fullName: string }) => c.fullName.split(' > ').at(-1),
      },
    },
    MediaImage: {
      id: { kind: 'scalar', resolve: (m: { id: number }) => gid('MediaImage', m.id) },
      mediaContentType: { kind: 'scalar', resolve: () => 'IMAGE' },
      image: { kind: 'object', type: 'Image', resolve: (m: { url: string }) => image(m.url) },
    },
    Image: {
      url: { kind: 'scalar', resolve: (i: { url: string }) => i.url },
      altText: { kind: 'scalar', resolve: () => null },
    },
    ProductVariant: {
      id: { kind: 'scalar', resolve: (v: ShopVariant) => gid('ProductVariant', v.id) },
      legacyResourceId: { kind: 'scalar', resolve: (v: ShopVariant) => String(v.id) },
      title: { kind: 'scalar', resolve: (v: ShopVariant) => v.title },
      sku: { kind: 'scalar', resolve: (v: ShopVariant) => v.sku },
      barcode: { kind: 'scalar', resolve: (v: ShopVariant) => v.barcode },
      price: { kind: 'scalar', resolve: (v: ShopVariant) => v.price },
      compareAtPrice: { kind: 'scalar', resolve: (v: ShopVariant) => v.compareAtPrice },
      inventoryQuantity: { kind: 'scalar', resolve: (v: ShopVariant) => v.inventoryQuantity },
      availableForSale: { kind: 'scalar', resolve: (v: ShopVariant) => v.availableForSale },
      selectedOptions: {
        kind: 'list',
        type: 'SelectedOption',
        resolve: (v: ShopVariant) => v.options,
      },
      image: { kind: 'object', type: 'Image', resolve: (v: ShopVariant) => image(v.image) },
    },
    SelectedOption: {
      name: { kind: 'scalar', resolve: (o: { name: string }) => o.name },
      value: { kind: 'scalar', resolve: (o: { value: string }) => o.value },
    },
    BulkOperation: {
      id: { kind: 'scalar', resolve: (o: BulkOperation) => o.id },
      status: { kind: 'scalar', resolve: (o: BulkOperation) => o.status },
      errorCode: { kind: 'scalar', resolve: (o: BulkOperation) => o.errorCode },
      type: { kind: 'scalar', resolve: () => 'QUERY' },
      query: { kind: 'scalar', resolve: (o: BulkOperation) => o.query },
      createdAt: { kind: 'scalar', resolve: () => '2026-11-25T12:00:00Z' },
      objectCount: {
        kind: 'scalar',
        resolve: (o: BulkOperation) => String(o.status === 'COMPLETED' ? catalogue.size : 0),
      },
      rootObjectCount: {
        kind: 'scalar',
        resolve: (o: BulkOperation) => String(o.status === 'COMPLETED' ? catalogue.size : 0),
      },
      url: {
        kind: 'scalar',
        resolve: (o: BulkOperation) =>
          o.status === 'COMPLETED' && catalogue.size > 0
            ? `${server.origin}/bulk/${numericOf(o.id)}.jsonl`
            : null,
      },
      partialDataUrl: { kind: 'scalar', resolve: () => null },
    },
    BulkOperationRunQueryPayload: {
      bulkOperation: {
        kind: 'object',
        type: 'BulkOperation',
        resolve: (p: { bulkOperation: BulkOperation | null }) => p.bulkOperation,
      },
      userErrors: {
        kind: 'list',
        type: 'UserError',
        resolve: (p: { userErrors: unknown[] }) => p.userErrors,
      },
    },
    UserError: {
      field: { kind: 'scalar', resolve: (e: { field: string[] | null }) => e.field },
      message: { kind: 'scalar', resolve: (e: { message: string }) => e.message },
    },
  };

  const bulkOperations: BulkOperation[] = [];
  const bulkPolls = options.bulkPolls ?? 2;

  function startBulk(query: string) {
    const running = bulkOperations.find((o) => o.status === 'CREATED' || o.status === 'RUNNING');
    if (running)
      return {
        bulkOperation: null,
        userErrors: [
          {
            field: null,
            message: `A bulk query operation for this app and shop is already in progress: ${running.id}.`,
          },
        ],
      };
    try {
      const op = parseOperation(query);
      requestedCost(schema, 'QueryRoot', op.selections, {});
    } catch (err) {
      return {
        bulkOperation: null,
        userErrors: [{ field: ['query'], message: (err as Error).message }],
      };
    }
    const op: BulkOperation = {
      id: gid('BulkOperation', bulkOperations.length + 1),
      status: 'CREATED',
      query,
      polls: 0,
      errorCode: null,
    };
    bulkOperations.push(op);
    return { bulkOperation: op, userErrors: [] };
  }

  function pollBulk(op: BulkOperation) {
    if (op.status === 'COMPLETED' || op.status === 'FAILED') return;
    op.polls++;
    if (op.polls >= bulkPolls) {
      if (server.failNextBulk) {
        op.status = 'FAILED';
        op.errorCode = server.failNextBulk;
        server.failNextBulk = null;
      } else op.status = 'COMPLETED';
    } else op.status = 'RUNNING';
  }

  /** The JSONL of a bulk query: each product's line, then one line per child node. */
  function* bulkLines(query: string): Generator<string> {
    const op = parseOperation(query);
    const root = op.selections.find((s): s is Field => s.kind === 'field' && s.name === 'products');
    if (!root?.selections) return;
    const nodeSelections = connectionNode(root.selections);
    const own = nodeSelections.filter(
      (s) => s.kind !== 'field' || schema.Product![s.name]?.kind !== 'connection',
    );
    const children = nodeSelections.filter(
      (s): s is Field => s.kind === 'field' && schema.Product![s.name]?.kind === 'connection',
    );
    for (const product of catalogue.all()) {
      const parentId = gid('Product', product.id);
      yield JSON.stringify(execute(schema, 'Product', product, own, {}).data) + '\n';
      for (const child of children) {
        const def = schema.Product![child.name] as Extract<
          Schema[string][string],
          { kind: 'connection' }
        >;
        const page = def.resolve(product as never, { first: Infinity });
        const sels = connectionNode(child.selections ?? []);
        for (const node of page.nodes) {
          const row = execute(schema, def.type, node, sels, {}).data;
          yield JSON.stringify({ ...row, __parentId: parentId }) + '\n';
        }
      }
    }
  }

  function connectionNode(selections: Selection[]): Selection[] {
    for (const s of selections) {
      if (s.kind !== 'field' || !s.selections) continue;
      if (s.name === 'nodes') return s.selections;
      if (s.name === 'edges')
        for (const e of s.selections)
          if (e.kind === 'field' && e.name === 'node' && e.selections) return e.selections;
    }
    return [];
  }

  function refill() {
    const t = now();
    bucket.available = Math.min(
      maximumAvailable,
      bucket.available + ((t - bucketAt) / 1000) * restoreRate,
    );
    bucketAt = t;
  }

  function throttleStatus() {
    return {
      maximumAvailable,
      currentlyAvailable: Math.floor(bucket.available),
      restoreRate,
    };
  }

  function validToken(token: string | null): boolean {
    if (!token) return false;
    if (token === staticToken) return true;
    const expires = tokens.get(token);
    return expires !== undefined && expires > now();
  }

  function graphql(body: string, token: string | null, log: LoggedShopifyRequest): CannedAnswer {
    if (!validToken(token))
      return json(401, {
        errors: '[API] Invalid API key or access token (unrecognized login or wrong password)',
      });
    let payload: { query?: unknown; variables?: unknown };
    try {
      payload = JSON.parse(body) as typeof payload;
    } catch {
      return json(400, { errors: { query: 'Required parameter missing or invalid' } });
    }
    const vars = (payload.variables ?? {}) as Record<string, unknown>;
    let op;
    let cost: number;
    try {
      op = parseOperation(String(payload.query ?? ''));
      log.operation = op.name;
      cost = op.type === 'mutation' ? 10 : requestedCost(schema, 'QueryRoot', op.selections, vars);
    } catch (err) {
      return json(200, {
        errors: [
          {
            message: (err as Error).message,
            extensions: { code: (err as GraphqlError).code ?? 'parseError' },
          },
        ],
      });
    }
    log.requestedCost = cost;
    if (cost > 1000)
      return json(200, {
        errors: [
          {
            message: `Query cost is ${cost}, which exceeds the single query max cost limit (1000).`,
            extensions: { code: 'MAX_COST_EXCEEDED', cost, maxCost: 1000 },
          },
        ],
      });
    refill();
    if (bucket.available < cost) {
      log.throttled = true;
      return json(200, {
        errors: [
          {
            message: 'Throttled',
            extensions: {
              code: 'THROTTLED',
              documentation: 'https://shopify.dev/api/usage/rate-limits',
            },
          },
        ],
        extensions: {
          cost: {
            requestedQueryCost: cost,
            actualQueryCost: null,
            throttleStatus: throttleStatus(),
          },
        },
      });
    }
    bucket.available -= cost;
    try {
      const root = op.type === 'mutation' ? 'Mutation' : 'QueryRoot';
      const result = execute(schema, root, {}, op.selections, vars);
      const actual = op.type === 'mutation' ? 10 : Math.min(cost, result.actualCost);
      bucket.available += cost - actual;
      return json(200, {
        data: result.data,
        extensions: {
          cost: {
            requestedQueryCost: cost,
            actualQueryCost: actual,
            throttleStatus: throttleStatus(),
          },
        },
      });
    } catch (err) {
      bucket.available += cost;
      return json(200, {
        errors: [
          {
            message: (err as Error).message,
            extensions: { code: (err as GraphqlError).code ?? 'internal' },
          },
        ],
      });
    }
  }

  function grant(body: string, contentType: string): CannedAnswer {
    const params: Record<string, string> = contentType.includes('json')
      ? (JSON.parse(body || '{}') as Record<string, string>)
      : Object.fromEntries(new URLSearchParams(body));
    if (params.grant_type !== 'client_credentials')
      return json(400, { error: 'unsupported_grant_type' });
    if (
      !options.clientId ||
      params.client_id !== options.clientId ||
      params.client_secret !== options.clientSecret
    )
      return json(400, {
        error: 'invalid_client',
        error_description: 'Client authentication failed due to unknown client or invalid secret.',
      });
    const token = `shpat_${randomBytes(16).toString('hex')}`;
    const ttl = options.tokenTtlSeconds ?? 86399;
    tokens.set(token, now() + ttl * 1000);
    return json(200, { access_token: token, scope: 'read_products', expires_in: ttl });
  }

  /** Ids of the products the storefront lists (published and active), by catalogue version. */
  let listed: { version: number; ids: number[] } = { version: -1, ids: [] };
  function storefront(url: URL): CannedAnswer {
    const limit = Math.min(250, Math.max(1, Number(url.searchParams.get('limit') ?? 30) || 30));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    if (listed.version !== catalogue.version) {
      const ids: number[] = [];
      for (const p of catalogue.all()) if (p.published && p.status === 'ACTIVE') ids.push(p.id);
      listed = { version: catalogue.version, ids };
    }
    const ids = listed.ids.slice((page - 1) * limit, page * limit);
    return json(200, { products: ids.map((id) => storefrontProduct(catalogue.get(id)!)) });
  }

  const server = {
    origin: '',
    catalogue,
    requests,
    failNext: [] as CannedAnswer[],
    bucket,
    tokens,
    bulkOperations,
    failNextBulk: null as string | null,
    cutNextBulkFile: null as number | null,
    storeUrl,
    close: async () => {},
  } satisfies ShopifyServer;

  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const token = (req.headers['x-shopify-access-token'] as string | undefined) ?? null;
      const log: LoggedShopifyRequest = {
        method: req.method ?? '',
        path: url.pathname + url.search,
        operation: null,
        status: 0,
        requestedCost: null,
        throttled: false,
        token,
        at: now(),
      };
      requests.push(log);
      const body = Buffer.concat(chunks).toString('utf8');
      const isAdmin = /^\/admin\//.test(url.pathname);
      let answer: CannedAnswer;
      const bulk = /^\/bulk\/(\d+)\.jsonl$/.exec(url.pathname);
      if (isAdmin && server.failNext.length > 0) {
        answer = cannedBody(server.failNext.shift()!);
      } else if (
        req.method === 'POST' &&
        /^\/admin\/api\/[^/]+\/graphql\.json$/.test(url.pathname)
      ) {
        answer = graphql(body, token, log);
      } else if (req.method === 'POST' && url.pathname === '/admin/oauth/access_token') {
        answer = grant(body, req.headers['content-type'] ?? '');
      } else if (req.method === 'GET' && url.pathname === '/products.json') {
        answer = storefront(url);
      } else if (req.method === 'GET' && url.pathname === '/meta.json') {
        answer = json(200, {
          name: options.shopName ?? 'Local Test Shop',
          currency: options.currency ?? 'USD',
          domain: new URL(storeUrl).host,
          myshopify_domain: 'local-test.myshopify.com',
        });
      } else if (req.method === 'GET' && bulk) {
        const op = bulkOperations[Number(bulk[1]) - 1];
        if (!op || op.status !== 'COMPLETED') answer = { status: 404, body: 'Not Found' };
        else {
          log.status = 200;
          res.writeHead(200, { 'content-type': 'application/jsonl' });
          const cut = server.cutNextBulkFile;
          if (cut === null) return void Readable.from(bulkLines(op.query)).pipe(res);
          server.cutNextBulkFile = null;
          const whole = Buffer.from([...bulkLines(op.query)].join(''));
          return void res.end(whole.subarray(0, Math.max(0, whole.length - cut)));
        }
      } else answer = json(404, { errors: 'Not Found' });
      log.status = answer.status;
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=utf-8',
        ...answer.headers,
      });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  server.origin = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      httpServer.close(() => resolve());
      httpServer.closeAllConnections();
    });
  return server;
}

function countOf(count: number, limit: unknown) {
  const cap = limit === undefined ? 10_000 : limit;
  if (typeof cap === 'number' && count > cap) return { count: cap, precision: 'AT_LEAST' };
  return { count, precision: 'EXACT' };
}

function json(status: number, body: unknown): CannedAnswer {
  return { status, body: JSON.stringify(body) };
}

/** Shopify's bodies for the statuses tests ask for. */
function cannedBody(answer: CannedAnswer): CannedAnswer {
  if (answer.body !== undefined) return answer;
  const messages: Record<number, string> = {
    401: '[API] Invalid API key or access token (unrecognized login or wrong password)',
    402: 'Unavailable Shop',
    403: 'Forbidden',
    423: 'Locked',
    429: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.',
  };
  const headers =
    answer.status === 429 ? { 'retry-after': '2.0', ...answer.headers } : answer.headers;
  return {
    status: answer.status,
    headers: headers ?? {},
    body: JSON.stringify({ errors: messages[answer.status] ?? 'Internal Server Error' }),
  };
}

/** A product as the storefront's /products.json lists it. */
