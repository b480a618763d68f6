/**
 * A local ACP Feed API (vendor/acp/openapi.feed.yaml, 2026-04-17) for tests: `POST /feeds`,
 * `GET /feeds/{id}`, `GET` and `PATCH /feeds/{id}/products`, answering as the spec says
 * (FeedMetadata, ProductsResponse, UpsertProductsResponse `{id, accepted}`, and its Error
 * shape `{type, code, message, param}` for 400 and 404). Every PATCH body is validated with
 * ajv: the UpsertProductsRequest envelope, each Product against
 * vendor/acp/schema.feed.json#/$defs/Product. A bearer token is required when one is set.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { loadAcpProductValidator } from './discovery.js';

export interface AcpFeedServer {
  url: string;
  /** Creates a feed as POST /feeds does; returns its id. */
  createFeed(targetCountry?: string): string;
  /** The products a feed holds, by id. */
  products(feedId: string): Map<string, Record<string, unknown>>;
  /** Every PATCH received: the feed, the number of products, the status answered. */
  patches: { feedId: string; products: number; status: number }[];
  /** Answers the next `n` PATCH requests with this status (a failing platform). */
  failNext(n: number, status: number): void;
  /**
   * Holds the next PATCH: received, neither applied nor answered (a sender that will be
   * killed mid-send). Resolves when it has arrived.
   */
  holdNext(): Promise<void>;
  /** PATCH requests held (received, never answered). */
  held: number;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function error(
  res: http.ServerResponse,
  status: number,
  code: string,
  message: string,
  param: string,
) {
  send(res, status, { type: 'invalid_request', code, message, param });
}

export async function startAcpFeedServer(
  t: Test,
  options: { token?: string } = {},
): Promise<AcpFeedServer> {
  const validateProduct = loadAcpProductValidator();
  const feeds = new Map<
    string,
    { target_country?: string; updated_at: string; products: Map<string, Record<string, unknown>> }
  >();
  const patches: AcpFeedServer['patches'] = [];
  let failing = { n: 0, status: 500 };
  let holding: (() => void) | undefined;
  let held = 0;
  let next = 0;
  const createFeed = (targetCountry?: string) => {
    const id = `feed_${(++next).toString(36).padStart(6, '0')}`;
    feeds.set(id, {
      ...(targetCountry ? { target_country: targetCountry } : {}),
      updated_at: new Date().toISOString(),
      products: new Map(),
    });
    return id;
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
        return error(res, 401, 'unauthorized', 'A valid bearer token is required', 'authorization');
      }
      const match = /^\/feeds(?:\/([^/]+)(\/products)?)?$/.exec(req.url ?? '');
      if (!match) return error(res, 404, 'not_found', 'Not found', 'path');
      const [, id, products] = match;
      if (!id) {
        if (req.method !== 'POST')
          return error(res, 405, 'method_not_allowed', 'POST only', 'method');
        const body = (raw ? JSON.parse(raw) : {}) as { target_country?: string };
        if (body.target_country !== undefined && !/^[A-Z]{2}$/.test(body.target_country)) {
          return error(
            res,
            400,
            'invalid_target_country',
            'target_country must be an ISO 3166-1 alpha-2 code',
            'target_country',
          );
        }
        const created = createFeed(body.target_country);
        const feed = feeds.get(created)!;
        return send(res, 201, {
          id: created,
          ...(feed.target_country ? { target_country: feed.target_country } : {}),
          updated_at: feed.updated_at,
        });
      }
      const feed = feeds.get(decodeURIComponent(id));
      if (!feed) return error(res, 404, 'feed_not_found', 'Feed not found', 'id');
      if (!products)
        return send(res, 200, {
          id,
          ...(feed.target_country ? { target_country: feed.target_country } : {}),
          updated_at: feed.updated_at,
        });
      if (req.method === 'GET') return send(res, 200, { products: [...feed.products.values()] });
      if (req.method !== 'PATCH')
        return error(res, 405, 'method_not_allowed', 'GET or PATCH', 'method');
      if (holding) {
        held++;
        holding();
        holding = undefined;
        return;
      }
      const answer = (status: number) => patches.push({ feedId: id, products: 0, status });
      if (failing.n > 0) {
        failing.n--;
        answer(failing.status);
        return error(res, failing.status, 'unavailable', 'Try again later', 'products');
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        answer(400);
        return error(res, 400, 'invalid_json', 'The body is not JSON', 'body');
      }
      const list = (body as { products?: unknown }).products;
      const extra = Object.keys(body as object).filter((k) => k !== 'products');
      if (!Array.isArray(list) || list.length === 0 || extra.length > 0) {
        answer(400);
        return error(
          res,
          400,
          'invalid_product_payload',
          'products must contain at least one valid Product',
          'products',
        );
      }
      for (const [i, product] of list.entries()) {
        if (!validateProduct(product)) {
          answer(400);
          const detail = validateProduct.errors?.[0];
          return error(
            res,
            400,
            'invalid_product_payload',
            `products[${i}]${detail?.instancePath ?? ''} ${detail?.message ?? 'is invalid'}`,
            `products[${i}]`,
          );
        }
      }
      for (const product of list as Record<string, unknown>[])
        feed.products.set(String(product.id), product);
      feed.updated_at = new Date().toISOString();
      patches.push({ feedId: id, products: list.length, status: 200 });
      send(res, 200, { id, accepted: true });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    createFeed,
    products: (feedId) => feeds.get(feedId)?.products ?? new Map(),
    patches,
    failNext: (n, status) => {
      failing = { n, status };
    },
    holdNext: () => new Promise<void>((resolve) => (holding = resolve)),
    get held() {
      return held;
    },
  };
}
