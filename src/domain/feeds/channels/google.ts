/**
 * The `google` profile: Merchant Center product data (support.google.com/merchants/answer/
 * 7052112, the product data specification), which Google's AI Mode and Gemini read, and
 * through the same file Perplexity and PayPal; with the attributes of agentic checkout
 * (developers.google.com/merchant/ucp/guides/merchant-center, read 2026-11-27):
 * `native_commerce` (a boolean), `consumer_notice` (consumer_notice_type and
 * consumer_notice_message) and `merchant_item_id`, written where a product carries them.
 */
import type { CatalogueProduct } from '../../catalogue/product.js';
import { isLinkAsGiven } from '../../catalogue/url.js';
import { formatMinorUnits } from '../../money.js';
import { dropForbiddenCharacters } from '../record.js';
import {
  issue,
  longerThan,
  requiredLink,
  requiredText,
  sortIssues,
  textOf,
  type ChannelIssue,
  type ChannelItem,
  type ChannelSettings,
  type ChannelValue,
  type FlatProfile,
  checkedCondition,
  checkedGtin,
  imageLinks,
} from './profile.js';

export const GOOGLE_COLUMNS = [
  'id',
  'title',
  'description',
  'link',
  'image_link',
  'additional_image_link',
  'price',
  'availability',
  'brand',
  'gtin',
  'mpn',
  'condition',
  'product_type',
  'item_group_id',
  'color',
  'size',
  'material',
  'gender',
  'age_group',
  'native_commerce',
  'merchant_item_id',
  'consumer_notice',
] as const;

/** The sub-attributes of consumer_notice, in order. */
export const CONSUMER_NOTICE_FIELDS = ['consumer_notice_type', 'consumer_notice_message'] as const;
export const CONSUMER_NOTICE_TYPES = ['legal_disclaimer', 'safety_warning', 'prop_65'] as const;
const NOTICE_TYPES: ReadonlySet<string> = new Set(CONSUMER_NOTICE_TYPES);
const AVAILABILITY = new Set(['in_stock', 'out_of_stock', 'preorder', 'backorder']);
/** Optional attributes Merchant Center caps, and their caps (characters). */
const OPTIONAL_CAPS: readonly [field: string, max: number][] = [
  ['mpn', 70],
  ['product_type', 750],
  ['color', 100],
  ['size', 100],
  ['material', 200],
];
const CAPS: ReadonlyMap<string, number> = new Map(OPTIONAL_CAPS);

const I = {
  id: requiredText('id', 50, 'id'),
  title: requiredText('title', 150, 'title'),
  description: requiredText('description', 5000, 'description'),
  link: requiredLink('link', 2000, 'product page (attributes.url)'),
  image: requiredLink('image_link', 2000, 'image'),
  itemGroup: issue('item_group_id', 'too_long', 'error', 'item_group_id is longer than 50'),
  priceInvalid: issue('price', 'invalid', 'error', 'price must be above zero'),
  availabilityInvalid: issue(
    'availability',
    'invalid',
    'error',
    'availability must be in_stock, out_of_stock, preorder or backorder',
  ),
  noticeInvalid: issue(
    'consumer_notice',
    'invalid',
    'error',
    'consumer_notice needs a type (legal_disclaimer, safety_warning or prop_65) and a message of at most 1000 characters',
  ),
  nativeCommerceInvalid: issue(
    'native_commerce',
    'invalid',
    'warning',
    'native_commerce is not a boolean: left out (the product is not offered for checkout)',
  ),
  additionalImageInvalid: issue(
    'additional_image_link',
    'invalid',
    'warning',
    'an additional image is not an http(s) URL: left out',
  ),
  brandTooLong: issue('brand', 'too_long', 'warning', 'brand is longer than 70: left out'),
  gtinInvalid: issue('gtin', 'invalid', 'warning', 'gtin has no valid check digit: left out'),
  conditionInvalid: issue('condition', 'invalid', 'warning', 'condition is unknown: left out'),
  capped: new Map(
    OPTIONAL_CAPS.map(([field, max]) => [
      field,
      issue(field, 'too_long', 'warning', `${field} is longer than ${max}: left out`),
    ]),
  ),
};

/** attributes.consumer_notice as Google's group, or undefined when absent; null when invalid. */
function consumerNotice(
  value: unknown,
  clean: (value: string) => string,
): Record<string, string> | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const { type, message } = value as { type?: unknown; message?: unknown };
  if (typeof type !== 'string' || !NOTICE_TYPES.has(type)) return null;
  if (typeof message !== 'string' || message.trim() === '' || longerThan(message, 1000)) {
    return null;
  }
  return { consumer_notice_type: type, consumer_notice_message: clean(message) };
}

/** An optional attribute, left out (with a warning) when Merchant Center would refuse it. */
function capped(field: string, value: string, issues: ChannelIssue[]): string {
  if (!longerThan(value, CAPS.get(field)!)) return value;
  issues.push(I.capped.get(field)!);
  return '';
}

/** An additional image Merchant Center takes: an http(s) link of at most 2,000 characters. */
function isAdditionalImage(url: string): boolean {
  return isLinkAsGiven(url) && url.length <= 2000;
}

/** One product as a Merchant Center item, with what Merchant Center would refuse in it. */
function mapGoogle(
  p: CatalogueProduct,
  _s: ChannelSettings,
  clean: (value: string) => string = dropForbiddenCharacters,
): ChannelItem {
  const issues: ChannelIssue[] = [];
  const a = p.attributes;
  const images = imageLinks(p, clean, isAdditionalImage);
  if (images.dropped) issues.push(I.additionalImageInvalid);
  const availability = p.givenAvailability ?? p.availability;
  let brand = clean(p.brand);
  if (longerThan(brand, 70)) {
    issues.push(I.brandTooLong);
    brand = '';
  }
  const gtin = checkedGtin(a.gtin, I.gtinInvalid, issues);
  const condition = checkedCondition(a.condition, I.conditionInvalid, issues);
  let nativeCommerce = '';
  if (typeof a.native_commerce === 'boolean') nativeCommerce = String(a.native_commerce);
  else if (a.native_commerce !== undefined) issues.push(I.nativeCommerceInvalid);
  const notice = consumerNotice(a.consumer_notice, clean);
  if (notice === null) issues.push(I.noticeInvalid);
  const group = p.itemGroupId === undefined ? '' : clean(p.itemGroupId);
  // The optional attributes Merchant Center caps, in OPTIONAL_CAPS order (their warnings too).
  const mpn = capped('mpn', clean(textOf(a.mpn)), issues);
  const productType = capped('product_type', p.category === null ? '' : clean(p.category), issues);
  const color = capped('color', clean(textOf(a.color)), issues);
  const size = capped('size', clean(textOf(a.size)), issues);
  const material = capped('material', clean(textOf(a.material)), issues);
  const record: Record<string, ChannelValue> = {
    id: clean(p.id),
    title: clean(p.name),
    description: p.description === null ? '' : clean(p.description),
    link: p.url === undefined ? '' : clean(p.url),
    image_link: images.first,
    additional_image_link: images.additional,
    price: `${formatMinorUnits(p.price.minor, p.price.currency)} ${p.price.currency}`,
    availability: clean(availability),
    brand,
    gtin,
    condition,
    item_group_id: group,
    gender: clean(textOf(a.gender)),
    age_group: clean(textOf(a.age_group)),
    native_commerce: nativeCommerce,
    merchant_item_id: clean(textOf(a.merchant_item_id)),
    consumer_notice: notice ?? '',
    mpn,
    product_type: productType,
    color,
    size,
    material,
  };
  I.id.check(record.id as string, issues);
  I.title.check(record.title as string, issues);
  I.description.check(record.description as string, issues);
  I.link.check(record.link as string, issues);
  I.image.check(record.image_link as string, issues);
  if (longerThan(group, 50)) issues.push(I.itemGroup);
  if (!(p.price.minor > 0)) issues.push(I.priceInvalid);
  if (!AVAILABILITY.has(availability)) issues.push(I.availabilityInvalid);
  return { id: p.id, record, issues: sortIssues(issues) };
}

export const googleProfile: FlatProfile = {
  name: 'google',
  kind: 'flat',
  formats: ['xml', 'tsv'],
  gzip: true,
  excludes: true,
  columns: GOOGLE_COLUMNS,
  groups: { consumer_notice: CONSUMER_NOTICE_FIELDS },
  map: mapGoogle,
};
