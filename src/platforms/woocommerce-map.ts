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
 * WooCommerce REST v3 products (and variations) to SourceItems. A simple or external product
 * is one item (its own id); a variable product is one item per variation (the variation's
 * id), each with `item_group_id` = the product's id (simple products carry it too, so a
 * delete webhook finds them by group). Grouped products have no price of their own: their
 * children are listed as products themselves, so a grouped product yields nothing.
 *
 * Decisions: status publish -> active (inactive when its catalog visibility is `hidden`),
 * private -> inactive, draft/pending/future -> draft; a variation that is not `publish` is
 * inactive. stock_status instock -> in_stock, outofstock -> out_of_stock, onbackorder ->
 * backorder. Prices are WooCommerce's strings ("19.99"), passed as they are: the product
 * schema turns them into minor units (and refuses more decimals than the currency has). The
 * category is the deepest of the product's categories, as a path from the category tree
 * ("Clothing > Shirts"); "Uncategorized" is no category.
 */

export interface WooMapContext {
  currency: string;
  /** Category id -> full path ("Clothing > Shirts"), from /products/categories. */
  categoryPaths: ReadonlyMap<string, string>;
}

const STOCK: Record<string, string> = {
  instock: 'in_stock',
  outofstock: 'out_of_stock',
  onbackorder: 'backorder',
};

function productStatus(p: Record<string, unknown>): SourceProduct['status'] {
  const status = str(p.status) ?? 'publish';
  if (status === 'publish') return p.catalog_visibility === 'hidden' ? 'inactive' : 'active';
  if (status === 'private') return 'inactive';
  return 'draft';
}

function categoryOf(p: Record<string, unknown>, paths: ReadonlyMap<string, string>): string | null {
  let best: string | null = null;
  for (const c of Array.isArray(p.categories) ? p.categories.filter(isRecord) : []) {
    if (str(c.slug) === 'uncategorized') continue;
    const path = paths.get(str(c.id) ?? '') ?? htmlToText(str(c.name));
    if (path && (!best || path.split(' > ').length > best.split(' > ').length)) best = path;
  }
  return best;
}

function brandOfProduct(p: Record<string, unknown>): string | undefined {
  const brands = Array.isArray(p.brands) ? p.brands.filter(isRecord) : [];
  const fromTaxonomy = brandOf(htmlToText(str(brands[0]?.name)));
  if (fromTaxonomy) return fromTaxonomy;
  for (const a of Array.isArray(p.attributes) ? p.attributes.filter(isRecord) : []) {
    if ((str(a.name) ?? '').toLowerCase() !== 'brand') continue;
    const options = Array.isArray(a.options) ? a.options : [];
    return brandOf(options[0]);
  }
  return undefined;
}

/** Attributes of a simple product that name one value each ("Color: Red"). */
function singleValuedAttributes(p: Record<string, unknown>): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const a of Array.isArray(p.attributes) ? p.attributes.filter(isRecord) : []) {
    const options = Array.isArray(a.options) ? a.options : [];
    if (options.length === 1 && typeof options[0] === 'string')
      out.push({ name: str(a.name) ?? '', value: options[0] });
  }
  return out;
}

function definedOnly(record: Record<string, unknown>): SourceProduct['attributes'] {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value;
  return out as SourceProduct['attributes'];
}

function names(list: unknown): string[] | undefined {
  const out = (Array.isArray(list) ? list.filter(isRecord) : [])
    .map((t) => htmlToText(str(t.name)))
    .filter((n): n is string => !!n);
  return out.length > 0 ? out : undefined;
}

function quantity(entity: Record<string, unknown>): number | undefined {
  if (entity.manage_stock !== true || typeof entity.stock_quantity !== 'number') return undefined;
  return Math.max(0, Math.trunc(entity.stock_quantity));
}

function compareAt(entity: Record<string, unknown>): string | undefined {
  const regular = str(entity.regular_price);
  const price = str(entity.price);
  return entity.on_sale === true && regular && regular !== price ? regular : undefined;
}

/** A simple (or external) product's one item. */
export function itemOfSimpleProduct(
  p: Record<string, unknown>,
  context: WooMapContext,
): SourceItem {
  const id = str(p.id) ?? '';
  const name = htmlToText(str(p.name));
  if (!name) return errorItem(id, 'name', 'the product has no name');
  const price = str(p.price)?.trim();
  if (!price) return errorItem(id, 'price', 'the product has no price');
  const options = singleValuedAttributes(p);
  return productItem(id, {
    name,
    description: descriptionOf(
      htmlToText(str(p.description)) ?? htmlToText(str(p.short_description)),
    ),
    price,
    currency: context.currency,
    status: productStatus(p),
    category: categoryOf(p, context.categoryPaths),
    images: imageList(imagesOf(p)),
    attributes: definedOnly({
      item_group_id: id,
      brand: brandOfProduct(p),
      sku: str(p.sku)?.trim() || undefined,
      gtin: gtinOf(p.global_unique_id),
      barcode: str(p.global_unique_id)?.trim() || undefined,
      handle: str(p.slug) || undefined,
      tags: names(p.tags),
      url: str(p.permalink) || undefined,
      availability: STOCK[str(p.stock_status) ?? ''],
      inventory_quantity: quantity(p),
      compare_at_price: compareAt(p),
      product_type: str(p.type),
      ...optionAttributes(options),
    }),
  });
}

function imagesOf(entity: Record<string, unknown>): (string | undefined)[] {
  return (Array.isArray(entity.images) ? entity.images.filter(isRecord) : []).map((i) =>
    str(i.src),
  );
}

/** One variation of a variable product. */
export function itemOfVariation(
  p: Record<string, unknown>,
  v: Record<string, unknown>,
  context: WooMapContext,
): SourceItem {
  const id = str(v.id) ?? '';
  const productName = htmlToText(str(p.name));
  if (!productName) return errorItem(id, 'name', 'the product has no name');
  const price = str(v.price)?.trim();
  if (!price) return errorItem(id, 'price', 'the variation has no price');
  const options = (Array.isArray(v.attributes) ? v.attributes.filter(isRecord) : [])
    .map((a) => ({ name: str(a.name) ?? '', value: str(a.option) ?? '' }))
    .filter((o) => o.value !== '');
  const status = productStatus(p);
  const image = isRecord(v.image) ? str(v.image.src) : undefined;
  return productItem(id, {
    name: variantName(productName, options.map((o) => o.value).join(' / ')),
    description: descriptionOf(
      htmlToText(str(v.description)) ??
        htmlToText(str(p.description)) ??
        htmlToText(str(p.short_description)),
    ),
    price,
    currency: context.currency,
    status: status === 'active' && (str(v.status) ?? 'publish') !== 'publish' ? 'inactive' : status,
    category: categoryOf(p, context.categoryPaths),
    images: imageList([image, ...imagesOf(p)]),
    attributes: definedOnly({
      item_group_id: str(p.id),
      brand: brandOfProduct(p),
      sku: str(v.sku)?.trim() || str(p.sku)?.trim() || undefined,
      gtin: gtinOf(v.global_unique_id),
      barcode: str(v.global_unique_id)?.trim() || undefined,
      handle: str(p.slug) || undefined,
      tags: names(p.tags),
      url: str(v.permalink) || str(p.permalink) || undefined,
      availability: STOCK[str(v.stock_status) ?? ''],
      inventory_quantity: quantity(v),
      compare_at_price: compareAt(v),
      product_type: 'variable',
      options:
        options.length > 0 ? Object.fromEntries(options.map((o) => [o.name, o.value])) : undefined,
      ...optionAttributes([...singleValuedAttributes(p), ...options].reverse()),
    }),
  });
}
