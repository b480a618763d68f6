/**
 * The `stripe` profile: the CSV of Stripe's agentic commerce product catalog
 * (docs.stripe.com/agentic-commerce/product-feed, and the columns of its catalog_feed.product.1
 * report, docs.stripe.com/reports/report-types/commerce; read 2026-11-27): one row per product
 * or variant keyed by `id`, Merchant Center's column names, and the optional `delete` column
 * (blank keeps the product). Imported by the Product Catalog Import API in upsert or replace
 * mode.
 */
import type { CatalogueProduct } from '../../catalogue/product.js';
import { isLinkAsGiven } from '../../catalogue/url.js';
import { formatMinorUnits } from '../../money.js';
import { dropForbiddenCharacters } from '../record.js';
import {
  issue,
  requiredLink,
  requiredText,
  sortIssues,
  textOf,
  type ChannelIssue,
  type ChannelItem,
  type ChannelSettings,
  type FlatProfile,
  checkedCondition,
  checkedGtin,
  imageLinks,
} from './profile.js';

export const STRIPE_COLUMNS = [
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
  'item_group_id',
  'color',
  'size',
  'age_group',
  'delete',
] as const;

const AVAILABILITY = new Set(['in_stock', 'out_of_stock', 'preorder', 'backorder']);
const I = {
  id: requiredText('id', 100, 'id'),
  title: requiredText('title', 150, 'title'),
  description: requiredText('description', 5000, 'description'),
  link: requiredLink('link', undefined, 'product page (attributes.url)'),
  image: requiredLink('image_link', undefined, 'image'),
  priceInvalid: issue('price', 'invalid', 'error', 'price must be above zero'),
  availabilityInvalid: issue(
    'availability',
    'invalid',
    'error',
    'availability must be in_stock, out_of_stock, preorder or backorder',
  ),
  additionalImageInvalid: issue(
    'additional_image_link',
    'invalid',
    'warning',
    'an additional image is not an http(s) URL: left out',
  ),
  gtinInvalid: issue('gtin', 'invalid', 'warning', 'gtin has no valid check digit: left out'),
  conditionInvalid: issue('condition', 'invalid', 'warning', 'condition is unknown: left out'),
};

function mapStripe(
  p: CatalogueProduct,
  _s: ChannelSettings,
  clean: (value: string) => string = dropForbiddenCharacters,
): ChannelItem {
  const issues: ChannelIssue[] = [];
  const a = p.attributes;
  const images = imageLinks(p, clean, isLinkAsGiven);
  if (images.dropped) issues.push(I.additionalImageInvalid);
  const availability = p.givenAvailability ?? p.availability;
  const gtin = checkedGtin(a.gtin, I.gtinInvalid, issues);
  const condition = checkedCondition(a.condition, I.conditionInvalid, issues);
  const record = {
    id: clean(p.id),
    title: clean(p.name),
    description: p.description === null ? '' : clean(p.description),
    link: p.url === undefined ? '' : clean(p.url),
    image_link: images.first,
    additional_image_link: images.additional,
    price: `${formatMinorUnits(p.price.minor, p.price.currency)} ${p.price.currency}`,
    availability: clean(availability),
    brand: clean(p.brand),
    gtin,
    mpn: clean(textOf(a.mpn)),
    condition,
    item_group_id: p.itemGroupId === undefined ? '' : clean(p.itemGroupId),
    color: clean(textOf(a.color)),
    size: clean(textOf(a.size)),
    age_group: clean(textOf(a.age_group)),
    delete: '',
  };
  I.id.check(record.id, issues);
  I.title.check(record.title, issues);
  I.description.check(record.description, issues);
  I.link.check(record.link, issues);
  I.image.check(record.image_link, issues);
  if (!(p.price.minor > 0)) issues.push(I.priceInvalid);
  if (!AVAILABILITY.has(availability)) issues.push(I.availabilityInvalid);
  return { id: p.id, record, issues: sortIssues(issues) };
}

export const stripeProfile: FlatProfile = {
  name: 'stripe',
  kind: 'flat',
  formats: ['csv'],
  gzip: false,
  excludes: true,
  columns: STRIPE_COLUMNS,
  map: mapStripe,
};
