import type { HttpResponse } from '../net/http-client.js';
import {
  SourceError,
  type IntegrationSource,
  type SourceContext,
  type SourceItem,
  type WebhookChange,
} from '../domain/integrations/source.js';
import { isRecord, str } from './common.js';
import { asSourceError, assertSecureForCredentials, platformOrigin } from './origin.js';
import { itemOfSimpleProduct, itemOfVariation, type WooMapContext } from './woocommerce-map.js';

/**
 * WooCommerce (`platform: woocommerce`): the REST API v3 at /wp-json/wc/v3 with the consumer
 * key and secret of a read key (WooCommerce > Settings > Advanced > REST API), sent by HTTP
 * Basic. WooCommerce only takes Basic (or keys in the query string) over HTTPS; over plain
 * HTTP it wants OAuth 1.0a signatures, which we do not send: keys go to https:// shops only,
 * or over http to a loopback or private address (a local WooCommerce, tests).
 *
 * Products are paged 100 at a time (WordPress refuses per_page over 100) in id order, up to
 * X-WP-TotalPages; each variable product's variations come from /products/{id}/variations;
 * the currency from /data/currencies/current; category paths from /products/categories.
 */

export const WOO_PER_PAGE = 100;
const API = '/wp-json/wc/v3';

interface WooClient {
  get(path: string): Promise<{ body: unknown; headers: Record<string, string> }>;
}

function wooClient(ctx: SourceContext): WooClient {
  const key = ctx.credentials?.consumer_key;
  const secret = ctx.credentials?.consumer_secret;
  if (!key || !secret)
    throw new SourceError('WooCommerce needs a consumer_key and consumer_secret', 'invalid');
  const origin = platformOrigin(ctx);
  assertSecureForCredentials(origin);
  const authorization = `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;
  return {
    async get(path) {
      let res: HttpResponse;
      try {
        res = await ctx.http.request({
          url: `${origin}${API}${path}`,
          headers: { authorization, accept: 'application/json' },
        });
      } catch (err) {
        throw asSourceError(err);
      }
      if (res.status !== 200) throw await statusError(res);
      try {
        return { body: await res.json(), headers: res.headers };
      } catch {
        throw new SourceError(
          'WooCommerce answered with something that is not JSON (a security plugin or a maintenance page?)',
        );
      }
    },
  };
}

/** WooCommerce's and WordPress's errors ({code, message, data: {status}}) in words. */
async function statusError(res: HttpResponse): Promise<SourceError> {
  let code = '';
  let message = '';
  try {
    const body = JSON.parse(await res.text()) as unknown;
    if (isRecord(body)) {
      code = str(body.code) ?? '';
      message = (str(body.message) ?? '').slice(0, 200);
    }
  } catch {
    // not JSON: the status says enough
  }
  const said = code ? ` (${code}${message ? `: ${message}` : ''})` : '';
  const s = res.status;
  if (s === 401 || s === 403)
    return new SourceError(
      `WooCommerce refused the consumer key${said}: check the key and secret, and that the key has Read permission`,
      'auth',
    );
  if (s === 404)
    return new SourceError(
      `no WooCommerce REST API at this address${said}: check the shop domain, that WooCommerce is active and permalinks are not "Plain"`,
      'invalid',
    );
  if (s === 400) return new SourceError(`WooCommerce refused the request${said}`, 'invalid');
  return new SourceError(`WooCommerce is unavailable (HTTP ${s}${said})`);
}

function totalPages(headers: Record<string, string>): number | null {
  const n = Number(headers['x-wp-totalpages']);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/** Every page of a list endpoint, in order, until X-WP-TotalPages (or a short page). */
async function* pages(client: WooClient, path: string): AsyncGenerator<Record<string, unknown>[]> {
  const sep = path.includes('?') ? '&' : '?';
  for (let page = 1; ; page++) {
    const { body, headers } = await client.get(
      `${path}${sep}per_page=${WOO_PER_PAGE}&page=${page}`,
    );
    if (!Array.isArray(body)) throw new SourceError(`WooCommerce answered ${path} without a list`);
    yield body.filter(isRecord);
    const total = totalPages(headers);
    if (total !== null ? page >= total : body.length < WOO_PER_PAGE) return;
  }
}

async function storeCurrency(client: WooClient, ctx: SourceContext): Promise<string> {
  const configured = str(ctx.settings.currency);
  if (configured) return configured;
  try {
    const { body } = await client.get('/data/currencies/current');
    const code = isRecord(body) ? str(body.code) : undefined;
    if (code) return code;
  } catch (err) {
    // An older WooCommerce without the endpoint (404): the default currency. Anything else
    // (refused, down) stops the run as it would on the products.
    if (!(err instanceof SourceError) || err.kind !== 'invalid') throw err;
    ctx.logger.warn({ integration: ctx.integrationId }, 'woocommerce currency unknown');
  }
  return ctx.defaultCurrency;
}

/** Category id -> "Parent > Child" from the category tree. */
async function categoryPaths(client: WooClient): Promise<Map<string, string>> {
  const nodes = new Map<string, { name: string; parent: string }>();
  for await (const page of pages(client, '/products/categories'))
    for (const c of page)
      nodes.set(str(c.id) ?? '', {
        name: (str(c.name) ?? '').replace(/&amp;/g, '&').trim(),
        parent: str(c.parent) ?? '0',
      });
  const paths = new Map<string, string>();
  for (const id of nodes.keys()) {
    const levels: string[] = [];
    const seen = new Set<string>();
    for (let at: string | undefined = id; at && nodes.has(at) && !seen.has(at);) {
      seen.add(at);
      const node: { name: string; parent: string } = nodes.get(at)!;
      levels.unshift(node.name.replace(/\s*>\s*/g, ' '));
      at = node.parent;
    }
    paths.set(id, levels.join(' > '));
  }
  return paths;
}

/** Variation requests in flight at once for one page of products. */
const VARIATION_CONCURRENCY = 4;

/**
 * The variations of each variable product of a page (an empty list for the others), fetched
 * at most VARIATION_CONCURRENCY at a time. A failure rejects that product's promise only
 * when it is awaited (no unhandled rejection in between).
 */
function fetchVariations(
  client: WooClient,
  page: Record<string, unknown>[],
): Promise<Record<string, unknown>[]>[] {
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (running >= VARIATION_CONCURRENCY) await new Promise<void>((r) => waiting.push(r));
    running++;
  };
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  return page.map((product) => {
    if (str(product.type) !== 'variable') return Promise.resolve([]);
    const job = (async () => {
      await slot();
      try {
        const all: Record<string, unknown>[] = [];
        for await (const list of pages(client, `/products/${str(product.id)}/variations`))
          all.push(...list);
        return all;
      } finally {
        release();
      }
    })();
    job.catch(() => {});
    return job;
  });
}

function mapContextOfState(ctx: SourceContext): WooMapContext {
  const saved = ctx.state.category_paths;
  return {
    currency: str(ctx.state.currency) ?? str(ctx.settings.currency) ?? ctx.defaultCurrency,
    categoryPaths: new Map(
      isRecord(saved)
        ? Object.entries(saved).filter((e): e is [string, string] => typeof e[1] === 'string')
        : [],
    ),
  };
}

export const woocommerceSource: IntegrationSource = {
  async test(ctx) {
    try {
      const client = wooClient(ctx);
      const { headers } = await client.get('/products?per_page=1');
      const currency = await storeCurrency(client, ctx);
      const total = headers['x-wp-total'];
      return {
        ok: true,
        message: `connected to WooCommerce: ${total ?? 'some'} products, currency ${currency}`,
      };
    } catch (err) {
      const e = asSourceError(err);
      if (e instanceof SourceError) return { ok: false, message: e.message };
      throw e;
    }
  },

  async *items(ctx): AsyncGenerator<SourceItem> {
    const client = wooClient(ctx);
    const currency = await storeCurrency(client, ctx);
    const paths = await categoryPaths(client);
    ctx.setState({ ...ctx.state, currency, category_paths: Object.fromEntries(paths) });
    const context: WooMapContext = { currency, categoryPaths: paths };
    for await (const page of pages(client, '/products?orderby=id&order=asc')) {
      // A page's variable products have their variations read a few at a time, while the
      // page is yielded in order: one request per variable product is WooCommerce's way.
      const variations = fetchVariations(client, page);
      for (const [i, product] of page.entries()) {
        const type = str(product.type);
        if (type === 'grouped') continue;
        if (type !== 'variable') {
          yield itemOfSimpleProduct(product, context);
          continue;
        }
        const list = await variations[i]!;
        for (const variation of list) yield itemOfVariation(product, variation, context);
        if (list.length === 0)
          yield {
            kind: 'error',
            externalId: str(product.id) ?? null,
            field: 'price',
            reason: 'the variable product has no variations, so no price',
          };
      }
    }
  },

  /**
   * product.created / product.updated / product.restored (the payload is the REST product) and
   * product.deleted ({id}). Simple products map as the sync maps them, from the payload alone,
   * with the currency and category paths kept from the last sync. A variable product's payload
   * lists only its variations' ids, so they are read from /products/{id}/variations (a
   * variation's own webhook reads its parent and the parent's variations): every variation of
   * the group is then known, and one the list no longer holds is gone. When they cannot be
   * read (the store down, the keys refused), nothing changes and the next sync brings them.
   */
  webhook(ctx, topic, payload): WebhookChange | Promise<WebhookChange> {
    const none: WebhookChange = { items: [], removedGroupIds: [] };
    if (!isRecord(payload)) return none;
    const id = str(payload.id);
    if (topic === 'product.deleted') return id ? { items: [], removedGroupIds: [id] } : none;
    if (topic !== 'product.created' && topic !== 'product.updated' && topic !== 'product.restored')
      return none;
    const type = str(payload.type);
    if (type === 'grouped') return none;
    if (type === 'variation') {
      const parent = str(payload.parent_id);
      return parent && parent !== '0' ? variableChange(ctx, parent, null) : none;
    }
    if (payload.status === 'trash') return id ? { items: [], removedGroupIds: [id] } : none;
    if (type === 'variable') return id ? variableChange(ctx, id, payload) : none;
    return { items: [itemOfSimpleProduct(payload, mapContextOfState(ctx))], removedGroupIds: [] };
  },
};

/**
 * The change a variable product's webhook makes: its variations read from WooCommerce, mapped
 * as the sync maps them. `product` is the webhook's payload (null: read it too, for a
 * variation's webhook). Nothing when the store cannot be read; logged.
 */
async function variableChange(
  ctx: SourceContext,
  id: string,
  product: Record<string, unknown> | null,
): Promise<WebhookChange> {
  const none: WebhookChange = { items: [], removedGroupIds: [] };
  try {
    const client = wooClient(ctx);
    let parent = product;
    if (!parent) {
      const { body } = await client.get(`/products/${encodeURIComponent(id)}`);
      if (!isRecord(body)) throw new SourceError(`WooCommerce answered /products/${id} oddly`);
      parent = body;
    }
    if (parent.status === 'trash') return { items: [], removedGroupIds: [id] };
    if (str(parent.type) !== 'variable') {
      return { items: [itemOfSimpleProduct(parent, mapContextOfState(ctx))], removedGroupIds: [] };
    }
    const variations: Record<string, unknown>[] = [];
    for await (const page of pages(client, `/products/${encodeURIComponent(id)}/variations`))
      variations.push(...page);
    const context = mapContextOfState(ctx);
    const items: SourceItem[] = variations.map((v) => itemOfVariation(parent, v, context));
    if (items.length === 0)
      items.push({
        kind: 'error',
        externalId: id,
        field: 'price',
        reason: 'the variable product has no variations, so no price',
      });
    return { items, removedGroupIds: [] };
  } catch (err) {
    const e = asSourceError(err);
    if (!(e instanceof SourceError)) throw e;
    ctx.logger.warn(
      { integration: ctx.integrationId, product: id, reason: e.message },
      'woocommerce webhook: variations not read; the next sync brings them',
    );
    return none;
  }
}
