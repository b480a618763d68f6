/**
 * The UCP catalog operations (search_catalog, lookup_catalog, get_product) over the store,
 * answering as vendor/ucp/spec/catalog-*.md say; the REST binding and the MCP tools of the
 * discovery server both call these. Only active products are found.
 */
import {
  findGroupProducts,
  findNamedGroups,
  searchProductGroups,
  type CatalogFilter,
  type GroupProductRow,
  type GroupRef,
} from '../../db/queries/product-search.js';
import type { Executor } from '../../db/transaction.js';
import { readCatalogueProduct, type CatalogueProduct } from '../catalogue/product.js';
import type { CursorSigner } from './cursor.js';
import { LOOKUP_CAPABILITY, SEARCH_CAPABILITY, UCP_VERSION } from './profile.js';
import { toUcpProduct, type UcpProduct, type UcpVariant } from './present.js';
import { searchTerms } from './query.js';
import {
  DEFAULT_PAGE,
  LookupRequest,
  MAX_LOOKUP_IDS,
  MAX_PAGE,
  ProductRequest,
  SearchRequest,
  UcpRequestError,
  parseUcpRequest,
} from './schemas.js';
import { selectVariants } from './selection.js';

export interface CatalogDeps {
  db: Executor;
  /** STORE_NAME: the seller, and the brand of products that name none. */
  storeName: string;
  /** DEFAULT_CURRENCY: what a price filter is in when the context names no currency. */
  currency: string;
  cursors: CursorSigner;
}

export interface UcpMessage {
  type: 'info' | 'error';
  code: string;
  content: string;
  severity?: 'unrecoverable';
}

/** The `ucp` member of a response: the version and the capability that answered. */
export function ucpMeta(capability: string, status: 'success' | 'error' = 'success') {
  return {
    version: UCP_VERSION,
    status,
    capabilities: { [capability]: [{ version: UCP_VERSION }] },
  };
}

function filterOf(
  request: { filters?: SearchRequest['filters']; context?: SearchRequest['context'] },
  currency: string,
): CatalogFilter {
  const f = request.filters;
  return {
    ...(f?.categories?.length ? { categories: f.categories } : {}),
    ...(f?.price
      ? {
          price: {
            min: f.price.min,
            max: f.price.max,
            currency: request.context?.currency ?? currency,
          },
        }
      : {}),
  };
}

/** The rows of each group, read into catalogue products, in the groups' order. */
function groupProducts(rows: readonly GroupProductRow[], storeName: string) {
  const byGroup = new Map<string, CatalogueProduct[]>();
  for (const row of rows) {
    const key = `${row.brand ?? ''}\u0000${String(row.group_key)}`;
    const list = byGroup.get(key) ?? [];
    list.push(readCatalogueProduct(row, { storeName }));
    byGroup.set(key, list);
  }
  return (g: GroupRef) => byGroup.get(`${g.brand ?? ''}\u0000${String(g.group_key)}`) ?? [];
}

export interface SearchOutcome {
  response: {
    ucp: ReturnType<typeof ucpMeta>;
    products: UcpProduct[];
    pagination: { has_next_page: boolean; cursor?: string };
  };
  /** The query as asked (for analytics), undefined for a browse by filters. */
  query: string | undefined;
}

/** search_catalog: ranked full-text search (or a browse by filters), a page at a time. */
export async function searchCatalog(
  deps: CatalogDeps,
  request: SearchRequest,
): Promise<SearchOutcome> {
  const filter = filterOf(request, deps.currency);
  if (request.query === undefined && !filter.categories && !filter.price) {
    throw new UcpRequestError('query', 'give a query, filters, or both');
  }
  const terms = searchTerms(request.query ?? '');
  const limit = Math.min(request.pagination?.limit ?? DEFAULT_PAGE, MAX_PAGE);
  const search = JSON.stringify({ query: request.query !== undefined, terms, filter, limit });
  let offset = 0;
  const cursor = request.pagination?.cursor;
  if (cursor !== undefined) {
    const at = deps.cursors.verify(cursor, search);
    if (at === undefined) {
      throw new UcpRequestError(
        'pagination.cursor',
        'is not a cursor this search gave (changed, or from another search)',
      );
    }
    offset = at;
  }
  const meta = ucpMeta(SEARCH_CAPABILITY);
  if (request.query !== undefined && terms.length === 0) {
    return {
      response: { ucp: meta, products: [], pagination: { has_next_page: false } },
      query: request.query,
    };
  }
  const found = await searchProductGroups(deps.db, terms, filter, { limit: limit + 1, offset });
  const groups = found.slice(0, limit);
  const productsOf = groupProducts(
    await findGroupProducts(deps.db, groups, filter),
    deps.storeName,
  );
  const products: UcpProduct[] = [];
  for (const g of groups) {
    const members = productsOf(g);
    if (members.length > 0)
      products.push(toUcpProduct(String(g.group_key), members, deps.storeName));
  }
  const more = found.length > limit;
  return {
    response: {
      ucp: meta,
      products,
      pagination: more
        ? { has_next_page: true, cursor: deps.cursors.sign(offset + limit, search) }
        : { has_next_page: false },
    },
    query: request.query,
  };
}

/** Unique identifiers, at most MAX_LOOKUP_IDS of them. */
function lookupIds(ids: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  if (unique.length > MAX_LOOKUP_IDS) {
    throw new UcpRequestError(
      'ids',
      `at most ${MAX_LOOKUP_IDS} identifiers a request`,
      'request_too_large',
    );
  }
  return unique;
}

/**
 * The groups identifiers name, each with the inputs of its variants: an active product's id
 * is an `exact` match of that variant; a group's item_group_id a `featured` match of its
 * featured variant.
 */
async function resolveIds(db: Executor, ids: readonly string[]) {
  const rows = await findNamedGroups(db, ids);
  const asked = new Set(ids);
  const groups = new Map<string, { ref: GroupRef; exact: string[]; byGroupId: boolean }>();
  const found = new Set<string>();
  for (const row of rows) {
    const key = `${row.brand ?? ''}\u0000${String(row.group_key)}`;
    const g = groups.get(key) ?? {
      ref: { brand: row.brand, group_key: row.group_key },
      exact: [],
      byGroupId: false,
    };
    if (asked.has(row.id)) {
      g.exact.push(row.id);
      found.add(row.id);
    }
    if (row.item_group !== null && asked.has(String(row.item_group))) {
      g.byGroupId = true;
      found.add(String(row.item_group));
    }
    groups.set(key, g);
  }
  // The rows come in no order a store guarantees: the exact ids (the first is the featured
  // variant) go in the request's order, so both stores feature the same variant.
  const order = new Map(ids.map((id, i) => [id, i]));
  for (const g of groups.values()) g.exact.sort((a, b) => order.get(a)! - order.get(b)!);
  return { groups: [...groups.values()], missing: ids.filter((id) => !found.has(id)) };
}

function notFoundMessages(ids: readonly string[]): UcpMessage[] {
  return ids.map((id) => ({ type: 'info', code: 'not_found', content: id }));
}

/** lookup_catalog: products by product (variant group) or variant id, with input correlation. */
export async function lookupCatalog(deps: CatalogDeps, request: LookupRequest) {
  const ids = lookupIds(request.ids);
  const filter = filterOf(request, deps.currency);
  const { groups, missing } = await resolveIds(deps.db, ids);
  const productsOf = groupProducts(
    await findGroupProducts(
      deps.db,
      groups.map((g) => g.ref),
      filter,
    ),
    deps.storeName,
  );
  const products: UcpProduct[] = [];
  for (const g of groups) {
    const members = productsOf(g.ref);
    if (members.length === 0) continue;
    const groupId = String(g.ref.group_key);
    const product = toUcpProduct(groupId, members, deps.storeName, g.exact[0]);
    const inputs = new Map<string, UcpVariant['inputs']>();
    for (const id of g.exact) inputs.set(id, [{ id, match: 'exact' }]);
    if (g.byGroupId) {
      const featured = product.variants[0]!.id;
      inputs.set(featured, [...(inputs.get(featured) ?? []), { id: groupId, match: 'featured' }]);
    }
    const variants = product.variants
      .filter((v) => inputs.has(v.id))
      .map((v) => ({ ...v, inputs: inputs.get(v.id)! }));
    if (variants.length > 0) products.push({ ...product, variants });
  }
  const messages = notFoundMessages(missing);
  return {
    ucp: ucpMeta(LOOKUP_CAPABILITY),
    products,
    ...(messages.length ? { messages } : {}),
  };
}

/** get_product: one product in full, narrowed by option selections (catalog-lookup.md). */
export async function getProduct(deps: CatalogDeps, request: ProductRequest) {
  const filter = filterOf(request, deps.currency);
  const { groups } = await resolveIds(deps.db, [request.id]);
  const g = groups[0];
  const members = g
    ? groupProducts(await findGroupProducts(deps.db, [g.ref], filter), deps.storeName)(g.ref)
    : [];
  if (!g || members.length === 0) {
    return {
      ucp: ucpMeta(LOOKUP_CAPABILITY, 'error'),
      messages: [
        {
          type: 'error',
          code: 'not_found',
          content: `Product not found: ${request.id}`,
          severity: 'unrecoverable',
        } satisfies UcpMessage,
      ],
    };
  }
  const product = toUcpProduct(String(g.ref.group_key), members, deps.storeName, g.exact[0]);
  return {
    ucp: ucpMeta(LOOKUP_CAPABILITY),
    product: selectVariants(product, g.exact[0], request.selected ?? [], request.preferences ?? []),
  };
}

/** The catalog operations, as the REST binding's paths and the MCP tools name them. */
export type CatalogOperation = 'search' | 'lookup' | 'product';

/** What a catalog call did, for analytics: the operation, the query and how many it found. */
export interface CatalogCall {
  operation: CatalogOperation;
  query?: string | undefined;
  results: number;
}

/** Runs one catalog operation on a request body already parsed as JSON. */
export async function runCatalogOperation(
  deps: CatalogDeps,
  operation: CatalogOperation,
  body: unknown,
): Promise<{ response: object; call: CatalogCall }> {
  if (operation === 'search') {
    const { response, query } = await searchCatalog(deps, parseUcpRequest(SearchRequest, body));
    return { response, call: { operation, query, results: response.products.length } };
  }
  if (operation === 'lookup') {
    const response = await lookupCatalog(deps, parseUcpRequest(LookupRequest, body));
    return { response, call: { operation, results: response.products.length } };
  }
  const response = await getProduct(deps, parseUcpRequest(ProductRequest, body));
  return { response, call: { operation, results: 'product' in response ? 1 : 0 } };
}
