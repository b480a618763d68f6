import type { SourceItem, SourceProduct } from '../domain/integrations/source.js';
import {
  brandOf,
  descriptionOf,
  errorItem,
  gtinOf,
  htmlToText,
  imageList,
  isRecord,
  optionAttributes,
  productItem,
  str,
  variantName,
} from './common.js';

/**
 * Shopify products to SourceItems, one per variant. Three shapes arrive: the Admin GraphQL
 * product (sync, bulk JSONL), the REST product JSON (products/create|update webhooks) and the
 * storefront's /products.json. Each is first read into a ProductView, and one function maps
 * views, so a product reads the same whichever way it came.
 *
 * Decisions: status ACTIVE -> active, DRAFT -> draft, ARCHIVED (and UNLISTED, hidden from the
 * shop's search) -> inactive. Category is the Shopify taxonomy's full name, else the product
 * type. A barcode becomes `gtin` only when it is a valid GTIN; it is kept as `barcode`
 * either way. Ids are Shopify's numeric ids (the tail of the GraphQL gid), which are what the
 * REST webhooks carry.
 */

export interface VariantView {
  id: string;
  title: string | null;
  sku: string | null;
  barcode: string | null;
  price: string | null;
  compareAtPrice: string | null;
  inventoryQuantity: number | null;
  available: boolean | null;
  options: { name: string; value: string }[];
  image: string | null;
}

export interface ProductView {
  id: string;
  title: string;
  description: string | null;
  vendor: string | null;
  productType: string | null;
  category: string | null;
  tags: string[];
  handle: string | null;
  status: 'active' | 'inactive' | 'draft';
  url: string | null;
  images: string[];
  variants: VariantView[];
}

/** `gid://shopify/ProductVariant/123` -> `123` (a numeric id stays as it is). */
export function numericId(gid: unknown): string {
  const text = str(gid) ?? '';
  const slash = text.lastIndexOf('/');
  return slash === -1 ? text : text.slice(slash + 1);
}

export function statusOf(status: unknown): ProductView['status'] {
  const s = typeof status === 'string' ? status.toUpperCase() : 'ACTIVE';
  if (s === 'ACTIVE') return 'active';
  if (s === 'DRAFT') return 'draft';
  return 'inactive';
}

/** The SourceItems of one product: one per variant, or an error when it cannot be one. */
export function itemsOfProduct(view: ProductView, currency: string): SourceItem[] {
  if (view.variants.length === 0)
    return [errorItem(view.id, 'price', 'the product has no variants, so no price')];
  if (view.title.trim() === '')
    return view.variants.map((v) => errorItem(v.id, 'name', 'the product has no title'));
  return view.variants.map((variant) => itemOfVariant(view, variant, currency));
}

function itemOfVariant(view: ProductView, variant: VariantView, currency: string): SourceItem {
  if (variant.price === null || variant.price.trim() === '')
    return errorItem(variant.id, 'price', 'the variant has no price');
  const attributes: Record<string, unknown> = {
    item_group_id: view.id,
    brand: brandOf(view.vendor),
    sku: variant.sku?.trim() || undefined,
    gtin: gtinOf(variant.barcode),
    barcode: variant.barcode?.trim() || undefined,
    handle: view.handle ?? undefined,
    tags: view.tags.length > 0 ? view.tags : undefined,
    url: view.url
      ? view.variants.length > 1
        ? `${view.url}?variant=${variant.id}`
        : view.url
      : undefined,
    availability:
      variant.available === null ? undefined : variant.available ? 'in_stock' : 'out_of_stock',
    inventory_quantity:
      variant.inventoryQuantity === null ? undefined : Math.max(0, variant.inventoryQuantity),
    compare_at_price: variant.compareAtPrice ?? undefined,
    product_type: view.productType?.trim() || undefined,
    options:
      variant.options.length > 0 && variant.title !== 'Default Title'
        ? Object.fromEntries(variant.options.map((o) => [o.name, o.value]))
        : undefined,
    ...optionAttributes(variant.options),
  };
  const product: SourceProduct = {
    name: variantName(view.title.trim(), variant.title),
    description: descriptionOf(view.description),
    price: variant.price.trim(),
    currency,
    status: view.status,
    category: view.category?.trim() || view.productType?.trim() || null,
    images: imageList([variant.image, ...view.images]),
    attributes: definedOnly(attributes) as SourceProduct['attributes'],
  };
  return productItem(variant.id, product);
}

function definedOnly(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value;
  return out;
}

// ---- Admin GraphQL ------------------------------------------------------------------------

/** The product fields the sync asks for (paged query and bulk query alike). */
export const PRODUCT_FIELDS = `id handle title description vendor productType tags status onlineStoreUrl
category { fullName }`;
export const VARIANT_FIELDS = `id title sku barcode price compareAtPrice inventoryQuantity availableForSale
selectedOptions { name value } image { url }`;
export const MEDIA_FIELDS = `... on MediaImage { image { url } }`;

/** A GraphQL product node (without its connections) to a view; variants and images added after. */
export function viewOfGraphqlProduct(node: Record<string, unknown>): ProductView {
  const category = isRecord(node.category) ? str(node.category.fullName) : undefined;
  return {
    id: numericId(node.id),
    title: str(node.title) ?? '',
    description: str(node.description) ?? htmlToText(str(node.descriptionHtml)) ?? null,
    vendor: str(node.vendor) ?? null,
    productType: str(node.productType) ?? null,
    category: category ?? null,
    tags: Array.isArray(node.tags) ? node.tags.filter((t) => typeof t === 'string') : [],
    handle: str(node.handle) ?? null,
    status: statusOf(node.status),
    url: str(node.onlineStoreUrl) ?? null,
    images: [],
    variants: [],
  };
}

export function viewOfGraphqlVariant(node: Record<string, unknown>): VariantView {
  const options = Array.isArray(node.selectedOptions)
    ? node.selectedOptions.filter(isRecord).map((o) => ({
        name: str(o.name) ?? '',
        value: str(o.value) ?? '',
      }))
    : [];
  const quantity = node.inventoryQuantity;
  return {
    id: numericId(node.id),
    title: str(node.title) ?? null,
    sku: str(node.sku) ?? null,
    barcode: str(node.barcode) ?? null,
    price: moneyString(node.price),
    compareAtPrice: moneyString(node.compareAtPrice),
    inventoryQuantity: typeof quantity === 'number' ? quantity : null,
    available: typeof node.availableForSale === 'boolean' ? node.availableForSale : null,
    options,
    image: isRecord(node.image) ? (str(node.image.url) ?? null) : null,
  };
}

/** A media node's image URL (MediaImage), or null for videos and 3D models. */
export function imageOfGraphqlMedia(node: Record<string, unknown>): string | null {
  return isRecord(node.image) ? (str(node.image.url) ?? null) : null;
}

/** Money arrives as a decimal string ("19.99"); older versions sent MoneyV2 objects. */
function moneyString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (isRecord(value)) return str(value.amount) ?? null;
  return null;
}

// ---- REST product JSON (webhooks, storefront /products.json) --------------------------------

export interface RestContext {
  /** The shop's public address (`https://example.com`), for product links. */
  storeUrl: string;
}

/**
 * A REST product (webhook payload or a /products.json entry) to a view. The storefront's
 * entries have no status (only published products are listed) and say `available` per
 * variant; the webhook's have a status and inventory fields instead.
 */
export function viewOfRestProduct(p: Record<string, unknown>, context: RestContext): ProductView {
  const images = Array.isArray(p.images) ? p.images.filter(isRecord) : [];
  const imageById = new Map(images.map((img) => [str(img.id), str(img.src)]));
  const optionNames = Array.isArray(p.options)
    ? p.options.filter(isRecord).map((o) => str(o.name) ?? '')
    : [];
  const variants = (Array.isArray(p.variants) ? p.variants.filter(isRecord) : []).map(
    (v): VariantView => {
      const options: { name: string; value: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const value = str(v[`option${i + 1}`]);
        if (value !== undefined) options.push({ name: optionNames[i] ?? `Option ${i + 1}`, value });
      }
      const featured = isRecord(v.featured_image) ? str(v.featured_image.src) : undefined;
      const quantity = typeof v.inventory_quantity === 'number' ? v.inventory_quantity : null;
      let available: boolean | null = typeof v.available === 'boolean' ? v.available : null;
      if (available === null && (quantity !== null || 'inventory_management' in v))
        available =
          v.inventory_management === null ||
          v.inventory_management === undefined ||
          v.inventory_policy === 'continue' ||
          (quantity ?? 0) > 0;
      return {
        id: str(v.id) ?? '',
        title: str(v.title) ?? null,
        sku: str(v.sku) ?? null,
        barcode: str(v.barcode) ?? null,
        price: str(v.price) ?? null,
        compareAtPrice: str(v.compare_at_price) ?? null,
        inventoryQuantity: quantity,
        available,
        options,
        image: featured ?? imageById.get(str(v.image_id)) ?? null,
      };
    },
  );
  const tags = Array.isArray(p.tags)
    ? p.tags.filter((t) => typeof t === 'string')
    : (str(p.tags) ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
  const handle = str(p.handle) ?? null;
  const published = !('published_at' in p) || p.published_at !== null;
  const category = isRecord(p.category) ? str(p.category.full_name) : undefined;
  return {
    id: str(p.id) ?? '',
    title: str(p.title) ?? '',
    description: htmlToText(str(p.body_html)),
    vendor: str(p.vendor) ?? null,
    productType: str(p.product_type) ?? null,
    category: category ?? null,
    tags,
    handle,
    status: statusOf(p.status),
    url: handle && published ? `${context.storeUrl}/products/${handle}` : null,
    images: images.map((img) => str(img.src) ?? null).filter((s): s is string => s !== null),
    variants,
  };
}
