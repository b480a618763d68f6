import type { FeedSourceRow } from '../../db/queries/feeds.js';
import {
  CONDITIONS,
  isAvailability,
  readCatalogueProduct,
  type CatalogueProduct,
} from '../catalogue/product.js';
import { isLinkAsGiven } from '../catalogue/url.js';
import { codePointLength, isValidGtin } from '../fields.js';
import { formatMinorUnits } from '../money.js';

/**
 * The columns of every feed, in order: the flat product-feed fields of the OpenAI / ACP
 * product feed spec (CONTRACT part 3). JSON, CSV and XML carry the same records and columns.
 */
export const FEED_COLUMNS = [
  'id',
  'title',
  'description',
  'link',
  'image_link',
  'additional_image_link',
  'price',
  'availability',
  'inventory_quantity',
  'brand',
  'product_category',
  'gtin',
  'mpn',
  'condition',
  'item_group_id',
  'color',
  'size',
  'material',
  'gender',
  'age_group',
  'seller_name',
  'seller_url',
  'enable_search',
  'enable_checkout',
  // The flags' current names (OpenAI calls enable_* outdated); same values, both written.
  'is_eligible_search',
  'is_eligible_checkout',
] as const;
export type FeedColumn = (typeof FEED_COLUMNS)[number];

/** One product in a feed: every column, every value a string ('' when the product has none). */
export type FeedRecord = Record<FeedColumn, string>;

export interface FeedIssue {
  field: FeedColumn;
  problem: 'missing' | 'invalid' | 'too_long';
  severity: 'error' | 'warning';
  message: string;
}

export interface FeedItem {
  record: FeedRecord;
  issues: FeedIssue[];
}

export interface FeedSettings {
  /** STORE_NAME: seller_name, and the brand of products without one. */
  storeName: string;
  /** The store's public address (seller_url). */
  storeUrl: string;
}

/** The settings of a run, cleaned once (see dropForbiddenCharacters) rather than per product. */
export function feedSettings(storeName: string, storeUrl: string): FeedSettings {
  return {
    storeName: dropForbiddenCharacters(storeName),
    storeUrl: dropForbiddenCharacters(storeUrl),
  };
}

export const TITLE_MAX = 150;
export const DESCRIPTION_MAX = 5000;
const CONDITION: ReadonlySet<string> = new Set(CONDITIONS);

// The XML 1.0 Char production allows tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and
// U+10000-U+10FFFF. Everything else (other C0 controls, lone surrogates, U+FFFE, U+FFFF)
// is dropped from every value in every format, so the three formats carry identical records.
/* eslint-disable no-control-regex -- matching control characters is the point here */
const MAYBE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const FORBIDDEN =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/* eslint-enable no-control-regex */

// In JSON text written by JSON.stringify, those characters are escapes (\u0001, \b, \f,
// \udXXX) or raw U+FFFE / U+FFFF. A match only means "look closer": the slow path is exact.
const MAYBE_FORBIDDEN_IN_JSON = /\\u00[01]|\\[bf]|\\u[dD][89a-fA-F]|[\uFFFE\uFFFF]/;

/** Drops the characters XML 1.0 forbids; every other character is kept as it is. */
export function dropForbiddenCharacters(value: string): string {
  return MAYBE_FORBIDDEN.test(value) ? value.replace(FORBIDDEN, '') : value;
}

function same(value: string): string {
  return value;
}

/**
 * The cleaning a row needs: none for the usual row (a few tests on its raw columns), the
 * exact drop rule for a row that may hold a forbidden character.
 */
export function cleanerFor(row: FeedSourceRow): (value: string) => string {
  const suspect =
    MAYBE_FORBIDDEN.test(row.id) ||
    MAYBE_FORBIDDEN.test(row.name) ||
    (row.description !== null && MAYBE_FORBIDDEN.test(row.description)) ||
    (row.category !== null && MAYBE_FORBIDDEN.test(row.category)) ||
    MAYBE_FORBIDDEN_IN_JSON.test(row.images) ||
    MAYBE_FORBIDDEN_IN_JSON.test(row.attributes);
  return suspect ? dropForbiddenCharacters : same;
}

function issue(
  field: FeedColumn,
  problem: FeedIssue['problem'],
  severity: FeedIssue['severity'],
  message: string,
): FeedIssue {
  return Object.freeze({ field, problem, severity, message });
}

/** Every issue a product can have, one shared object each (a run may report millions). */
export const FEED_ISSUES = {
  titleMissing: issue('title', 'missing', 'error', 'title is empty'),
  titleTooLong: issue('title', 'too_long', 'error', `title is longer than ${TITLE_MAX} characters`),
  descriptionMissing: issue('description', 'missing', 'error', 'no description'),
  descriptionTooLong: issue(
    'description',
    'too_long',
    'error',
    `description is longer than ${DESCRIPTION_MAX} characters`,
  ),
  linkMissing: issue('link', 'missing', 'error', 'no product page (attributes.url)'),
  linkInvalid: issue('link', 'invalid', 'error', 'link is not an http(s) URL'),
  imageMissing: issue('image_link', 'missing', 'error', 'no image'),
  imageInvalid: issue('image_link', 'invalid', 'error', 'image_link is not an http(s) URL'),
  additionalImageInvalid: issue(
    'additional_image_link',
    'invalid',
    'warning',
    'an additional image is not an http(s) URL',
  ),
  priceInvalid: issue('price', 'invalid', 'error', 'price must be above zero'),
  availabilityInvalid: issue(
    'availability',
    'invalid',
    'error',
    'availability must be in_stock, out_of_stock, preorder or backorder',
  ),
  inventoryInvalid: issue(
    'inventory_quantity',
    'invalid',
    'error',
    'inventory_quantity must be a whole number of at least 0',
  ),
  brandMissing: issue('brand', 'missing', 'warning', 'no brand: the store name was used'),
  gtinInvalid: issue(
    'gtin',
    'invalid',
    'error',
    'gtin is not a GTIN-8, -12, -13 or -14 with a valid check digit',
  ),
  identifierMissing: issue(
    'gtin',
    'missing',
    'warning',
    'neither gtin nor mpn: agents match products by them',
  ),
  categoryMissing: issue('product_category', 'missing', 'warning', 'no category'),
  conditionInvalid: issue(
    'condition',
    'invalid',
    'error',
    'condition must be new, refurbished or used',
  ),
} as const;

/** An issue's code, `field.problem` (unique per issue): how counts travel and are summed. */
export function feedIssueCode(issue: FeedIssue): string {
  return `${issue.field}.${issue.problem}`;
}

/** Every issue by its code. */
export const FEED_ISSUES_BY_CODE: ReadonlyMap<string, FeedIssue> = new Map(
  Object.values(FEED_ISSUES).map((issue) => [feedIssueCode(issue), issue]),
);

function textOf(value: unknown, clean: (value: string) => string): string {
  if (typeof value === 'string') return clean(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/**
 * A product row as a feed record, with the issues a feed reader (ChatGPT, Merchant Center)
 * would find in it. Values are kept as they are, less the characters XML forbids.
 */
export function toFeedItem(row: FeedSourceRow, settings: FeedSettings): FeedItem {
  // FeedSettings is the catalogue context too: its storeName is the brand fallback.
  return feedItemOf(readCatalogueProduct(row, settings), settings, cleanerFor(row));
}

/**
 * A catalogue product as a feed record. URLs are published as given (a feed reader checks
 * them, and the issues say which are not links); `clean` drops the characters XML forbids,
 * and may skip that work when the row is known to hold none.
 */
export function feedItemOf(
  p: CatalogueProduct,
  settings: FeedSettings,
  clean: (value: string) => string = dropForbiddenCharacters,
): FeedItem {
  // Written for the pipeline's hot loop: no closures or intermediate arrays per product.
  const a = p.attributes;
  const images: string[] = [];
  for (const value of p.images) {
    const url = clean(value);
    if (url !== '') images.push(url);
  }
  // One value in every format: URLs joined by commas, a comma inside a URL percent-encoded.
  let additional = '';
  for (let i = 1; i < images.length; i++) {
    additional += (i > 1 ? ',' : '') + images[i]!.replaceAll(',', '%2C');
  }
  const brand = p.givenBrand === undefined ? '' : clean(p.givenBrand);
  const search = p.status === 'active' && a.enable_search !== false ? 'true' : 'false';
  const checkout = a.enable_checkout === true ? 'true' : 'false';
  const record: FeedRecord = {
    id: clean(p.id),
    title: clean(p.name),
    description: p.description === null ? '' : clean(p.description),
    link: p.url === undefined ? '' : clean(p.url),
    image_link: images[0] ?? '',
    additional_image_link: additional,
    price: `${formatMinorUnits(p.price.minor, p.price.currency)} ${p.price.currency}`,
    // A stated availability is published as stated (the issues flag one we do not know).
    availability:
      (p.givenAvailability === undefined ? '' : clean(p.givenAvailability)) || p.availability,
    inventory_quantity: p.inventoryQuantity === undefined ? '' : clean(p.inventoryQuantity),
    brand: brand || settings.storeName,
    product_category: p.category === null ? '' : clean(p.category),
    gtin: textOf(a.gtin, clean),
    mpn: textOf(a.mpn, clean),
    condition: textOf(a.condition, clean),
    item_group_id: p.itemGroupId === undefined ? '' : clean(p.itemGroupId),
    color: textOf(a.color, clean),
    size: textOf(a.size, clean),
    material: textOf(a.material, clean),
    gender: textOf(a.gender, clean),
    age_group: textOf(a.age_group, clean),
    seller_name: settings.storeName,
    seller_url: settings.storeUrl,
    enable_search: search,
    enable_checkout: checkout,
    is_eligible_search: search,
    is_eligible_checkout: checkout,
  };
  return { record, issues: diagnose(record, p.price.minor, brand === '', images) };
}

function diagnose(
  r: FeedRecord,
  priceMinor: number,
  brandMissing: boolean,
  images: string[],
): FeedIssue[] {
  const issues: FeedIssue[] = [];
  const I = FEED_ISSUES;
  if (r.title.trim() === '') issues.push(I.titleMissing);
  // Length in code points only matters past the limit in UTF-16 units.
  else if (r.title.length > TITLE_MAX && codePointLength(r.title) > TITLE_MAX)
    issues.push(I.titleTooLong);
  if (r.description.trim() === '') issues.push(I.descriptionMissing);
  else if (
    r.description.length > DESCRIPTION_MAX &&
    codePointLength(r.description) > DESCRIPTION_MAX
  )
    issues.push(I.descriptionTooLong);
  if (r.link === '') issues.push(I.linkMissing);
  else if (!isLinkAsGiven(r.link)) issues.push(I.linkInvalid);
  if (r.image_link === '') issues.push(I.imageMissing);
  else if (!isLinkAsGiven(r.image_link)) issues.push(I.imageInvalid);
  for (let i = 1; i < images.length; i++) {
    if (!isLinkAsGiven(images[i]!)) {
      issues.push(I.additionalImageInvalid);
      break;
    }
  }
  if (!(priceMinor > 0)) issues.push(I.priceInvalid);
  if (!isAvailability(r.availability)) issues.push(I.availabilityInvalid);
  if (r.inventory_quantity !== '' && !/^\d+$/.test(r.inventory_quantity))
    issues.push(I.inventoryInvalid);
  if (brandMissing) issues.push(I.brandMissing);
  if (r.gtin !== '' && !isValidGtin(r.gtin)) issues.push(I.gtinInvalid);
  if (r.gtin === '' && r.mpn === '') issues.push(I.identifierMissing);
  if (r.product_category === '') issues.push(I.categoryMissing);
  if (r.condition !== '' && !CONDITION.has(r.condition)) issues.push(I.conditionInvalid);
  return issues;
}
