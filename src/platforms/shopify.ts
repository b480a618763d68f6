import {
  SourceError,
  type IntegrationSource,
  type SourceContext,
  type SourceItem,
  type WebhookChange,
} from '../domain/integrations/source.js';
import { isRecord, str } from './common.js';
import { asSourceError, platformOrigin } from './origin.js';
import { ShopifyAdmin } from './shopify-admin.js';
import { bulkItems } from './shopify-bulk.js';
import {
  imageOfGraphqlMedia,
  itemsOfProduct,
  MEDIA_FIELDS,
  PRODUCT_FIELDS,
  VARIANT_FIELDS,
  viewOfGraphqlProduct,
  viewOfGraphqlVariant,
  viewOfRestProduct,
} from './shopify-map.js';

/**
 * Shopify (`platform: shopify`). With credentials, the Admin GraphQL API: products paged by
 * cursor, or for catalogues over `settings.bulk_threshold` products (default 10,000) a bulk
 * operation. Without credentials, the public storefront's /products.json.
 *
 * Page size: Shopify refuses a query whose requested cost is over 1,000 points, and a
 * connection costs 2 + first x (the cost of one node). A products page with 10 variants and 5
 * media per product costs 46 points a product, so a page holds 21 products (250 only when
 * nothing nested is asked for); a product with more than 10 variants gets the rest by a
 * follow-up query of 250 variants a page.
 */

const VARIANTS_PER_PRODUCT = 10;
const MEDIA_PER_PRODUCT = 5;
const MAX_QUERY_COST = 1000;
/** 1 product + 1 category + media (2 + 5 x 2) + variants (2 + 10 x 3: node, options, image). */
const COST_PER_PRODUCT = 1 + 1 + (2 + MEDIA_PER_PRODUCT * 2) + (2 + VARIANTS_PER_PRODUCT * 3);
export const SHOPIFY_PAGE_SIZE = Math.min(250, Math.floor((MAX_QUERY_COST - 2) / COST_PER_PRODUCT));
export const DEFAULT_BULK_THRESHOLD = 10_000;
const STOREFRONT_PAGE = 250;

const SHOP_QUERY = `query Shop { shop { name currencyCode primaryDomain { url } } }`;

const COUNT_QUERY = `query Counts($limit: Int) {
  productsCount(limit: $limit) { count precision }
  productVariantsCount(limit: null) { count precision }
}`;

export const PRODUCTS_QUERY = `query Products($first: Int!, $after: String) {
  products(first: $first, after: $after, sortKey: ID) {
    pageInfo { hasNextPage endCursor }
    nodes {
      ${PRODUCT_FIELDS}
      media(first: ${MEDIA_PER_PRODUCT}) { nodes { ${MEDIA_FIELDS} } }
      variants(first: ${VARIANTS_PER_PRODUCT}) {
        pageInfo { hasNextPage endCursor }
        nodes { ${VARIANT_FIELDS} }
      }
    }
  }
}`;

const MORE_VARIANTS_QUERY = `query MoreVariants($id: ID!, $after: String) {
  product(id: $id) {
    variants(first: 250, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { ${VARIANT_FIELDS} }
    }
  }
}`;

function hasAdminCredentials(ctx: SourceContext): boolean {
  const c = ctx.credentials;
  return Boolean(c && (c.access_token || (c.client_id && c.client_secret)));
}

interface ShopInfo {
  name: string;
  currency: string;
  storeUrl: string;
}

async function readShop(admin: ShopifyAdmin, origin: string): Promise<ShopInfo> {
  const data = await admin.query(SHOP_QUERY, {}, { cost: 2 });
  const shop = isRecord(data.shop) ? data.shop : {};
  const domain = isRecord(shop.primaryDomain) ? str(shop.primaryDomain.url) : undefined;
  return {
    name: str(shop.name) ?? '',
    currency: str(shop.currencyCode) ?? '',
    storeUrl: domain?.replace(/\/+$/, '') ?? origin,
  };
}

export const shopifySource: IntegrationSource = {
  async test(ctx) {
    const origin = platformOrigin(ctx);
    try {
      if (!hasAdminCredentials(ctx)) {
        const first = await storefrontPage(ctx, origin, 1, 1);
        return {
          ok: true,
          message: `the public storefront answers (${first.length === 0 ? 'no' : 'some'} products listed); without credentials drafts, barcodes and stock levels are not read`,
        };
      }
      const admin = new ShopifyAdmin(ctx, origin);
      const shop = await readShop(admin, origin);
      return {
        ok: true,
        message: `connected to the Shopify shop "${shop.name}" (currency ${shop.currency})`,
      };
    } catch (err) {
      const e = asSourceError(err);
      if (e instanceof SourceError) return { ok: false, message: e.message };
      throw e;
    }
  },

  async *items(ctx) {
    const origin = platformOrigin(ctx);
    if (!hasAdminCredentials(ctx)) {
      yield* storefrontItems(ctx, origin);
      return;
    }
    const admin = new ShopifyAdmin(ctx, origin);
    const shop = await readShop(admin, origin);
    const currency = shop.currency || ctx.defaultCurrency;
    ctx.setState({ ...ctx.state, currency, store_url: shop.storeUrl });
    const threshold = bulkThreshold(ctx);
    const counts = await admin.query(COUNT_QUERY, { limit: threshold + 1 }, { cost: 2 });
    const products = isRecord(counts.productsCount) ? Number(counts.productsCount.count) : 0;
    const variants = isRecord(counts.productVariantsCount)
      ? Number(counts.productVariantsCount.count)
      : NaN;
    if (Number.isFinite(variants)) yield { kind: 'total', count: variants };
    if (products > threshold) yield* bulkItems(admin, ctx, currency);
    else yield* pagedItems(admin, currency);
  },

  webhook(ctx, topic, payload): WebhookChange {
    const none: WebhookChange = { items: [], removedGroupIds: [] };
    if (!isRecord(payload)) return none;
    const id = str(payload.id);
    if (topic === 'products/delete') return id ? { items: [], removedGroupIds: [id] } : none;
    if (topic !== 'products/create' && topic !== 'products/update') return none;
    const currency = str(ctx.state.currency) ?? str(ctx.settings.currency) ?? ctx.defaultCurrency;
    const storeUrl = str(ctx.state.store_url) ?? platformOrigin(ctx);
    return {
      items: itemsOfProduct(viewOfRestProduct(payload, { storeUrl }), currency),
      removedGroupIds: [],
    };
  },
};

function bulkThreshold(ctx: SourceContext): number {
  const value = Number(ctx.settings.bulk_threshold ?? DEFAULT_BULK_THRESHOLD);
  if (!Number.isInteger(value) || value < 0)
    throw new SourceError('settings.bulk_threshold must be a whole number of products', 'invalid');
  return value;
}

/** Every product page by cursor, each product's variants past the first page fetched after. */
async function* pagedItems(admin: ShopifyAdmin, currency: string): AsyncGenerator<SourceItem> {
  let after: string | null = null;
  let cost = 2 + SHOPIFY_PAGE_SIZE * COST_PER_PRODUCT;
  for (;;) {
    const data = await admin.query(PRODUCTS_QUERY, { first: SHOPIFY_PAGE_SIZE, after }, { cost });
    cost = admin.lastRequestedCost ?? cost;
    const connection = isRecord(data.products) ? data.products : {};
    const nodes = Array.isArray(connection.nodes) ? connection.nodes.filter(isRecord) : [];
    for (const node of nodes) {
      const view = viewOfGraphqlProduct(node);
      const media = isRecord(node.media) && Array.isArray(node.media.nodes) ? node.media.nodes : [];
      for (const m of media.filter(isRecord)) {
        const url = imageOfGraphqlMedia(m);
        if (url) view.images.push(url);
      }
      let variants = isRecord(node.variants) ? node.variants : {};
      for (;;) {
        const list = Array.isArray(variants.nodes) ? variants.nodes.filter(isRecord) : [];
        for (const v of list) view.variants.push(viewOfGraphqlVariant(v));
        const info = isRecord(variants.pageInfo) ? variants.pageInfo : {};
        if (info.hasNextPage !== true) break;
        const more = await admin.query(
          MORE_VARIANTS_QUERY,
          { id: node.id, after: str(info.endCursor) ?? null },
          { cost: 3 + 250 * 3 },
        );
        variants =
          isRecord(more.product) && isRecord(more.product.variants) ? more.product.variants : {};
      }
      yield* itemsOfProduct(view, currency);
    }
    const info = isRecord(connection.pageInfo) ? connection.pageInfo : {};
    if (info.hasNextPage !== true || nodes.length === 0) return;
    after = str(info.endCursor) ?? null;
  }
}

// ---- the public storefront ------------------------------------------------------------------

async function storefrontPage(
  ctx: SourceContext,
  origin: string,
  page: number,
  limit = STOREFRONT_PAGE,
): Promise<Record<string, unknown>[]> {
  let res;
  try {
    res = await ctx.http.request({ url: `${origin}/products.json?limit=${limit}&page=${page}` });
  } catch (err) {
    throw asSourceError(err);
  }
  if (res.status === 401 || res.status === 403 || res.status === 404) {
    res.discard();
    throw new SourceError(
      `the storefront's /products.json answered ${res.status}: the shop may be password-protected; connect with an access token instead`,
      'invalid',
    );
  }
  if (res.status !== 200) {
    res.discard();
    throw new SourceError(`the storefront answered HTTP ${res.status}`);
  }
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    throw new SourceError(
      "the storefront's /products.json is not JSON: the shop may be password-protected",
      'invalid',
    );
  }
  if (!isRecord(json) || !Array.isArray(json.products))
    throw new SourceError("the storefront's /products.json has no products list", 'invalid');
  return json.products.filter(isRecord);
}

/** The shop's currency from the storefront's /meta.json, when it says. */
async function storefrontCurrency(ctx: SourceContext, origin: string): Promise<string | null> {
  try {
    const res = await ctx.http.request({ url: `${origin}/meta.json`, maxBytes: 1024 * 1024 });
    if (res.status !== 200) {
      res.discard();
      return null;
    }
    const json = await res.json();
    return isRecord(json) ? (str(json.currency) ?? null) : null;
  } catch {
    return null;
  }
}

/**
 * The storefront lists published products only, by page number; a product published or
 * removed while we page shifts the pages, so a product may come twice: ids already seen are
 * skipped.
 */
async function* storefrontItems(ctx: SourceContext, origin: string): AsyncGenerator<SourceItem> {
  const currency =
    str(ctx.settings.currency) ?? (await storefrontCurrency(ctx, origin)) ?? ctx.defaultCurrency;
  ctx.setState({ ...ctx.state, currency, store_url: origin });
  const seen = new Set<string>();
  for (let page = 1; ; page++) {
    const products = await storefrontPage(ctx, origin, page);
    if (products.length === 0) return;
    for (const p of products) {
      const id = str(p.id);
      if (id === undefined || seen.has(id)) continue;
      seen.add(id);
      yield* itemsOfProduct(viewOfRestProduct(p, { storeUrl: origin }), currency);
    }
    if (products.length < STOREFRONT_PAGE) return;
  }
}
