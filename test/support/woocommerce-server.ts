import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Catalogue, gtin13 } from './platform-catalogue.js';

/**
 * A local WooCommerce REST API v3, written from the WooCommerce REST API documentation and
 * WordPress's REST conventions:
 *
 * - `GET /wp-json/wc/v3/products` (per_page 1-100, default 10, else 400 `rest_invalid_param`
 *   as WordPress answers; page; orderby id|date, order asc|desc; status, default any) with
 *   `X-WP-Total`, `X-WP-TotalPages` and `Link` headers;
 * - `/products/{id}` (one product), `/products/{id}/variations`, `/products/categories` (paged likewise),
 *   `/data/currencies/current`;
 * - authentication by HTTP Basic (consumer key:secret) or `consumer_key`/`consumer_secret` in
 *   the query string: none is 401 `woocommerce_rest_cannot_view`, an unknown key or a wrong
 *   secret 401 `woocommerce_rest_authentication_error`, a write-only key
 *   `woocommerce_rest_cannot_view`. (WooCommerce takes these only over HTTPS; this server
 *   stands for one behind TLS termination and takes them over its plain HTTP.)
 * - any status on demand through `failNext`.
 *
 * Built over a Catalogue the test changes; every request is logged.
 */

export interface WooVariation {
  id: number;
  sku: string;
  price: string;
  regular_price: string;
  sale_price: string;
  on_sale: boolean;
  status: 'publish' | 'private';
  stock_status: 'instock' | 'outofstock' | 'onbackorder';
  manage_stock: boolean;
  stock_quantity: number | null;
  image: { id: number; src: string } | null;
  attributes: { id: number; name: string; option: string }[];
  description: string;
  global_unique_id: string;
  permalink: string;
}

export interface WooProduct {
  id: number;
  name: string;
  slug: string;
  permalink: string;
  type: 'simple' | 'variable' | 'grouped' | 'external';
  status: 'publish' | 'draft' | 'pending' | 'private';
  catalog_visibility: 'visible' | 'catalog' | 'search' | 'hidden';
  description: string;
  short_description: string;
  sku: string;
  price: string;
  regular_price: string;
  sale_price: string;
  on_sale: boolean;
  manage_stock: boolean;
  stock_quantity: number | null;
  stock_status: 'instock' | 'outofstock' | 'onbackorder';
  categories: { id: number; name: string; slug: string }[];
  tags: { id: number; name: string; slug: string }[];
  brands: { id: number; name: string; slug: string }[];
  images: { id: number; src: string; name: string; alt: string }[];
  attributes: {
    id: number;
    name: string;
    position: number;
    visible: boolean;
    variation: boolean;
    options: string[];
  }[];
  global_unique_id: string;
  /** Not in the product JSON: the variations behind its `variations` ids. */
  variationList: WooVariation[];
}

export interface WooCategory {
  id: number;
  name: string;
  slug: string;
  parent: number;
}

export interface LoggedWooRequest {
  method: string;
  path: string;
  status: number;
  /** How the request authenticated: 'basic', 'query' or null. */
  auth: 'basic' | 'query' | null;
}

export interface WooServerOptions {
  consumerKey?: string;
  consumerSecret?: string;
  /** A key with write permission only (cannot read). */
  writeOnlyKey?: { key: string; secret: string };
  currency?: string;
  categories?: WooCategory[];
  products?: number;
}

export interface WooServer {
  origin: string;
  catalogue: Catalogue<WooProduct>;
  requests: LoggedWooRequest[];
  failNext: { status: number; body?: string }[];
  close(): Promise<void>;
}

export const WOO_CATEGORIES: WooCategory[] = [
  { id: 10, name: 'Clothing', slug: 'clothing', parent: 0 },
  { id: 11, name: 'Shirts', slug: 'shirts', parent: 10 },
  { id: 12, name: 'Linen &amp; Cotton', slug: 'linen-cotton', parent: 11 },
  { id: 15, name: 'Uncategorized', slug: 'uncategorized', parent: 0 },
];

const STOCK = ['instock', 'outofstock', 'onbackorder'] as const;

/** Product `id` as generated: every third is variable with two colours, the rest simple. */
export function syntheticWooProduct(id: number): WooProduct {
  const price = `${10 + (id % 90)}.50`;
  const variable = id % 3 === 0;
  const permalink = `https://woo.example/product/synthetic-${id}/`;
  const colours = ['Red', 'Blue'];
  return {
    id,
    name: `Synthetic &amp; product ${id}`,
    slug: `synthetic-${id}`,
    permalink,
    type: variable ? 'variable' : 'simple',
    status: 'publish',
    catalog_visibility: 'visible',
    description: `<p>Product <b>${id}</b>, described.</p>`,
    short_description: '',
    sku: `WOO-${id}`,
    price: variable ? '' : price,
    regular_price: variable ? '' : price,
    sale_price: '',
    on_sale: false,
    manage_stock: !variable,
    stock_quantity: variable ? null : id % 4,
    stock_status: STOCK[id % 3]!,
    categories: [{ id: 11, name: 'Shirts', slug: 'shirts' }],
    tags: [{ id: 1, name: 'synthetic', slug: 'synthetic' }],
    brands: [{ id: 3, name: `Brand ${id % 5}`, slug: `brand-${id % 5}` }],
    images: [
      { id: id * 10, src: `https://woo.example/wp-content/uploads/p${id}.jpg`, name: '', alt: '' },
    ],
    attributes: variable
      ? [{ id: 1, name: 'Color', position: 0, visible: true, variation: true, options: colours }]
      : [],
    global_unique_id: variable ? '' : gtin13(id),
    variationList: variable
      ? colours.map((colour, i) => ({
          id: 10_000_000 + id * 10 + i,
          sku: `WOO-${id}-${colour.toUpperCase()}`,
          price,
          regular_price: price,
          sale_price: '',
          on_sale: false,
          status: 'publish',
          stock_status: STOCK[(id + i) % 3]!,
          manage_stock: true,
          stock_quantity: (id + i) % 4,
          image: null,
          attributes: [{ id: 1, name: 'Color', option: colour }],
          description: '',
          global_unique_id: gtin13(10_000_000 + id * 10 + i),
          permalink: `${permalink}?attribute_pa_color=${colour.toLowerCase()}`,
        }))
      : [],
  };
}

/** The product JSON as the API (and a webhook) sends it. */
export function wooProductJson(p: WooProduct) {
  const { variationList, ...rest } = p;
  return {
    ...rest,
    date_created: '2026-01-01T00:00:00',
    date_modified: '2026-01-01T00:00:00',
    variations: variationList.map((v) => v.id),
  };
}

function error(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
  return { status, body: JSON.stringify({ code, message, data: { status, ...extra } }) };
}

export async function startWooServer(options: WooServerOptions = {}): Promise<WooServer> {
  const key = options.consumerKey ?? 'ck_local_test_key';
  const secret = options.consumerSecret ?? 'cs_local_test_secret';
  const categories = options.categories ?? WOO_CATEGORIES;
  const catalogue = new Catalogue(syntheticWooProduct).fill(options.products ?? 0);
  const requests: LoggedWooRequest[] = [];
  const server: WooServer = {
    origin: '',
    catalogue,
    requests,
    failNext: [],
    close: async () => {},
  };

  function authenticate(
    req: http.IncomingMessage,
    url: URL,
    log: LoggedWooRequest,
  ): { status: number; body: string } | null {
    let pair: [string, string] | null = null;
    const header = req.headers.authorization;
    if (header?.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      pair = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      log.auth = 'basic';
    } else if (url.searchParams.has('consumer_key')) {
      pair = [url.searchParams.get('consumer_key')!, url.searchParams.get('consumer_secret') ?? ''];
      log.auth = 'query';
    }
    if (!pair)
      return error(401, 'woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    const [k, s] = pair;
    if (options.writeOnlyKey && k === options.writeOnlyKey.key && s === options.writeOnlyKey.secret)
      return error(401, 'woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    if (k !== key)
      return error(401, 'woocommerce_rest_authentication_error', 'Consumer key is invalid.');
    if (s !== secret)
      return error(401, 'woocommerce_rest_authentication_error', 'Consumer secret is invalid.');
    return null;
  }

  /** WordPress's paging: per_page 1-100, page >= 1, the headers. */
  function paged<T>(
    url: URL,
    total: number,
    at: (index: number) => T,
  ): { status: number; body: string; headers?: Record<string, string> } {
    const perPage = Number(url.searchParams.get('per_page') ?? 10);
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
      const message = 'per_page must be between 1 (inclusive) and 100 (inclusive)';
      return error(400, 'rest_invalid_param', 'Invalid parameter(s): per_page', {
        params: { per_page: message },
        details: { per_page: { code: 'rest_out_of_bounds', message, data: null } },
      });
    }
    const page = Number(url.searchParams.get('page') ?? 1);
    if (!Number.isInteger(page) || page < 1)
      return error(400, 'rest_invalid_param', 'Invalid parameter(s): page', {
        params: { page: 'page must be greater than or equal to 1' },
      });
    const pagesTotal = Math.ceil(total / perPage);
    const items: T[] = [];
    for (let i = (page - 1) * perPage; i < Math.min(total, page * perPage); i++) items.push(at(i));
    const base = `${server.origin}${url.pathname}`;
    const links: string[] = [];
    const linkTo = (n: number) => {
      const u = new URL(base);
      u.searchParams.set('per_page', String(perPage));
      u.searchParams.set('page', String(n));
      return u.toString();
    };
    if (page > 1) links.push(`<${linkTo(page - 1)}>; rel="prev"`);
    if (page < pagesTotal) links.push(`<${linkTo(page + 1)}>; rel="next"`);
    return {
      status: 200,
      body: JSON.stringify(items),
      headers: {
        'x-wp-total': String(total),
        'x-wp-totalpages': String(pagesTotal),
        ...(links.length > 0 ? { link: links.join(', ') } : {}),
      },
    };
  }

  function route(url: URL): { status: number; body: string; headers?: Record<string, string> } {
    const path = url.pathname.replace(/^\/wp-json\/wc\/v3/, '');
    if (path === '/products') {
      const status = url.searchParams.get('status') ?? 'any';
      const desc = (url.searchParams.get('order') ?? 'desc') === 'desc';
      if (status === 'any') {
        const n = catalogue.size;
        return paged(url, n, (i) => wooProductJson(catalogue.at(desc ? n - 1 - i : i)!));
      }
      const matching = [...catalogue.all()].filter((p) => p.status === status);
      if (desc) matching.reverse();
      return paged(url, matching.length, (i) => wooProductJson(matching[i]!));
    }
    const single = /^\/products\/(\d+)$/.exec(path);
    if (single) {
      const product = catalogue.get(Number(single[1]));
      if (!product) return error(404, 'woocommerce_rest_product_invalid_id', 'Invalid ID.');
      return { status: 200, body: JSON.stringify(wooProductJson(product)) };
    }
    const variations = /^\/products\/(\d+)\/variations$/.exec(path);
    if (variations) {
      const product = catalogue.get(Number(variations[1]));
      if (!product) return error(404, 'woocommerce_rest_product_invalid_id', 'Invalid ID.');
      return paged(url, product.variationList.length, (i) => product.variationList[i]!);
    }
    if (path === '/products/categories')
      return paged(url, categories.length, (i) => ({
        ...categories[i]!,
        description: '',
        display: 'default',
        image: null,
        menu_order: 0,
        count: 0,
      }));
    if (path === '/data/currencies/current') {
      const code = options.currency ?? 'USD';
      return {
        status: 200,
        body: JSON.stringify({ code, name: code, symbol: code === 'EUR' ? '&euro;' : '&#36;' }),
      };
    }
    return error(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }

  const httpServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const log: LoggedWooRequest = {
        method: req.method ?? '',
        path: url.pathname + url.search,
        status: 0,
        auth: null,
      };
      requests.push(log);
      let answer: { status: number; body: string; headers?: Record<string, string> };
      if (!url.pathname.startsWith('/wp-json/'))
        answer = { status: 404, body: '<html><body>Not Found</body></html>' };
      else if (server.failNext.length > 0) {
        const next = server.failNext.shift()!;
        answer = {
          status: next.status,
          body:
            next.body ??
            JSON.stringify({
              code: 'internal_server_error',
              message: 'There has been a critical error on this website.',
              data: { status: next.status },
            }),
        };
      } else answer = authenticate(req, url, log) ?? route(url);
      log.status = answer.status;
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=UTF-8',
        ...answer.headers,
      });
      res.end(answer.body);
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
