import { AVAILABILITIES } from '../domain/catalogue/product.js';
import { isHttpUrl } from '../domain/catalogue/url.js';
import { isValidGtin } from '../domain/fields.js';
import { isCurrency, MoneyError, toMinorUnits } from '../domain/money.js';
import { LIMITS, PRODUCT_STATUSES } from '../domain/products/schemas.js';
import type { SourceItem, SourceProduct } from '../domain/integrations/source.js';
import type { FieldValue, RawFields } from './feed-formats.js';

/**
 * One feed record (its own columns, see feed-formats.ts) as our product. The columns of
 * three dialects are read, by name, from any format:
 *
 * - our own feed export (CONTRACT part 3: id, title, description, link, image_link,
 *   additional_image_link, price "79.99 USD", availability, inventory_quantity, brand,
 *   product_category, gtin, mpn, condition, item_group_id, color, size, material, gender,
 *   age_group, seller_name, seller_url, enable_search, enable_checkout, is_eligible_search,
 *   is_eligible_checkout);
 * - Google Merchant Center (the same names, with `g:` in XML, plus sale_price,
 *   sale_price_effective_date, google_product_category, product_type, availability
 *   "in stock", product_highlight);
 * - the OpenAI / ACP flat product feed (price "39.00 USD", link, image_link,
 *   product_category, enable_search / enable_checkout and their newer names
 *   is_eligible_search / is_eligible_checkout).
 *
 * Our API's own product JSON (name, price as a number, currency, category, images,
 * attributes) is read too, so a dump of GET /v1/products can be served as a feed.
 */

export interface FeedMapping {
  defaultCurrency: string;
  now: Date;
}

/** The first non-empty text of a column (the first value of a repeated one). */
function first(fields: RawFields, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = fields[name];
    const text = Array.isArray(value) ? value.find((v) => v.trim() !== '') : value;
    if (text !== undefined && text.trim() !== '') return text.trim();
  }
  return undefined;
}

/** Every value of a column: repeated elements, JSON arrays, or a comma-separated list. */
function list(value: FieldValue | undefined): string[] {
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : value.split(',');
  return values.map((v) => v.trim()).filter((v) => v !== '');
}

const PRICE =
  /^(?:([A-Za-z]{3})\s*)?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:\s*([A-Za-z]{3}))?$/;

export type ParsedPrice = { amount: string; currency: string } | { error: string };

/**
 * A feed price: "39.00 USD" (Google, ACP, ours), "USD 39.00", "1,299.00 USD", or a bare
 * number with the currency in its own column or the store's default.
 */
export function parsePrice(
  text: string,
  currencyColumn: string | undefined,
  defaultCurrency: string,
): ParsedPrice {
  const match = PRICE.exec(text.trim());
  if (!match) {
    if (/^-/.test(text.trim())) return { error: `must not be negative (got "${text}")` };
    return { error: `must be an amount with a currency, such as "39.00 USD" (got "${text}")` };
  }
  const named = match[1] ?? match[3];
  const currency = (named ?? currencyColumn ?? defaultCurrency).toUpperCase();
  if (!isCurrency(currency)) return { error: `"${currency}" is not an ISO 4217 currency code` };
  let amount = match[2]!.replaceAll(',', '');
  if (amount.startsWith('.')) amount = `0${amount}`;
  try {
    toMinorUnits(amount, currency);
  } catch (err) {
    if (err instanceof MoneyError) return { error: `${err.message} (got "${text}")` };
    throw err;
  }
  return { amount, currency };
}

const BOOLEAN_TRUE = new Set(['true', 'yes', 'y', '1', 'on']);
const BOOLEAN_FALSE = new Set(['false', 'no', 'n', '0', 'off']);

function flag(fields: RawFields, newer: string, older: string): boolean | undefined {
  // The current name wins when a feed carries both and they disagree.
  for (const name of [newer, older]) {
    const text = first(fields, name)?.toLowerCase();
    if (text === undefined) continue;
    if (BOOLEAN_TRUE.has(text)) return true;
    if (BOOLEAN_FALSE.has(text)) return false;
  }
  return undefined;
}

const AVAILABILITY: ReadonlySet<string> = new Set(AVAILABILITIES);
/** Availability words of the dialects beyond ours (Google's "in stock", ACP's extra states). */
const AVAILABILITY_ALIASES: Record<string, string> = {
  limited_stock: 'in_stock',
  available_for_order: 'preorder',
  discontinued: 'out_of_stock',
  sold_out: 'out_of_stock',
};

function availabilityOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const key = text.toLowerCase().replace(/[\s-]+/g, '_');
  if (AVAILABILITY.has(key)) return key;
  return AVAILABILITY_ALIASES[key];
}

/** The text cut to `max` code points. */
function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join('').trimEnd();
}

/** Google's sale price applies when it is set and now is inside its effective dates. */
function saleApplies(fields: RawFields, now: Date): boolean {
  const range = first(fields, 'sale_price_effective_date');
  if (range === undefined) return true;
  const [from, to] = range.split('/').map((d) => Date.parse(d.trim()));
  if (from !== undefined && !Number.isNaN(from) && now.getTime() < from) return false;
  if (to !== undefined && !Number.isNaN(to) && now.getTime() >= to) return false;
  return true;
}

/** An image the API takes (an image it would refuse is left out, not the product). */
function isImageUrl(value: string): boolean {
  return value.length <= LIMITS.url && isHttpUrl(value);
}

const STATUSES: ReadonlySet<string> = new Set(PRODUCT_STATUSES);

/** Attribute columns copied as they are (text), when present. */
const TEXT_ATTRIBUTES = ['brand', 'mpn', 'color', 'size', 'material', 'item_group_id'] as const;
/** Attribute columns of a fixed vocabulary: lower-cased. */
const WORD_ATTRIBUTES = ['condition', 'gender', 'age_group'] as const;

/**
 * A record as a source item: a product, or an error naming our field and the reason. The
 * feed's `id` is the external id (and `item_group_id` groups variants, as in every dialect).
 */
export function recordToItem(fields: RawFields, position: number, map: FeedMapping): SourceItem {
  const externalId = first(fields, 'id', 'offer_id', 'sku') ?? null;
  const where = externalId === null ? ` (item ${position})` : '';
  const fail = (field: string, reason: string): SourceItem => ({
    kind: 'error',
    externalId,
    field,
    reason: reason + where,
  });
  if (externalId === null) return fail('id', 'the item has no id');
  const name = first(fields, 'title', 'name');
  if (name === undefined) return fail('name', 'the item has no title');

  const priceText = first(fields, 'price');
  if (priceText === undefined) return fail('price', 'the item has no price');
  const currencyColumn = first(fields, 'currency');
  const price = parsePrice(priceText, currencyColumn, map.defaultCurrency);
  if ('error' in price) return fail('price', price.error);
  const attributes: Record<string, string | number | boolean | string[]> = {};
  let amount = price.amount;
  let currency = price.currency;
  const saleText = first(fields, 'sale_price');
  if (saleText !== undefined && saleApplies(fields, map.now)) {
    const sale = parsePrice(saleText, currencyColumn ?? price.currency, map.defaultCurrency);
    if ('error' in sale) return fail('price', `sale_price ${sale.error}`);
    attributes.original_price = amount;
    amount = sale.amount;
    currency = sale.currency;
  }

  const product: SourceProduct = { name, price: amount, currency };
  // Lossy like the other platforms: a description past our limit is cut, not the product.
  const description = first(fields, 'description', 'summary', 'content');
  product.description = description === undefined ? null : cutText(description, LIMITS.description);

  const statusText = first(fields, 'status')?.toLowerCase();
  product.status =
    statusText !== undefined && STATUSES.has(statusText) ? (statusText as 'active') : 'active';

  // ACP and ours name the category product_category; Google's own taxonomy is second to the
  // merchant's product_type, and only a path (not a numeric id) makes a category.
  const googleCategory = first(fields, 'google_product_category');
  const category =
    first(fields, 'product_category', 'category', 'product_type') ??
    (googleCategory !== undefined && !/^\d+$/.test(googleCategory) ? googleCategory : undefined);
  product.category = category ?? null;
  if (googleCategory !== undefined) attributes.google_product_category = googleCategory;

  const images: string[] = [];
  for (const url of [
    ...list(fields.image_link),
    ...list(fields.images),
    ...list(fields.additional_image_link),
  ]) {
    if (isImageUrl(url) && !images.includes(url)) images.push(url);
    if (images.length === LIMITS.images) break;
  }
  product.images = images;

  const link = first(fields, 'link', 'url');
  if (link !== undefined) attributes.url = link;
  for (const key of TEXT_ATTRIBUTES) {
    const value = first(fields, key);
    if (value !== undefined) attributes[key] = value;
  }
  for (const key of WORD_ATTRIBUTES) {
    const value = first(fields, key);
    if (value !== undefined) attributes[key] = value.toLowerCase();
  }
  // A barcode that is no GTIN (a bad check digit, an internal code) is left out, as the
  // other platforms do: feeds carry many, and the product is good without it.
  const gtin = first(fields, 'gtin', 'upc', 'ean', 'isbn');
  if (gtin !== undefined && isValidGtin(gtin)) attributes.gtin = gtin;
  const availability = availabilityOf(first(fields, 'availability'));
  if (availability !== undefined) attributes.availability = availability;
  const quantity = first(fields, 'inventory_quantity', 'quantity');
  if (quantity !== undefined && /^\d+$/.test(quantity))
    attributes.inventory_quantity = Number(quantity);
  // Repeated elements or a JSON array; one text column is one feature (commas and all).
  const highlights = fields.product_highlight ?? fields.features;
  const features = (Array.isArray(highlights) ? highlights : highlights ? [highlights] : [])
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (features.length > 0) attributes.features = features.slice(0, LIMITS.features);

  // The flags, kept the way our export reads them: search is on unless turned off, checkout
  // off unless turned on. Only a departure from that is stored.
  const search = flag(fields, 'is_eligible_search', 'enable_search');
  const checkout = flag(fields, 'is_eligible_checkout', 'enable_checkout');
  if (search === false) attributes.enable_search = false;
  if (checkout === true) attributes.enable_checkout = true;

  // Values of a fixed vocabulary (condition, gender, ...) are checked by the sync's schema.
  product.attributes = attributes as SourceProduct['attributes'];
  return { kind: 'product', externalId, product };
}
