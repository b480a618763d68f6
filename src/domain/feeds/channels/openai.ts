/**
 * The `openai` profile: OpenAI's product feed for ChatGPT (developers.openai.com/commerce/specs/
 * file-upload/products, read 2026-11-27; docs/feeds.md#channels cites it): the current field
 * names only (item_id, url, image_url, additional_image_urls, group_id, ...; the outdated id,
 * link, image_link and enable_* are not written), one row per variant, the nine required
 * fields (item_id, title, description, url, brand, seller_name, image_url, availability,
 * price) and the required geo fields (target_countries, store_country).
 */
import type { CatalogueProduct } from '../../catalogue/product.js';
import { isLinkAsGiven } from '../../catalogue/url.js';
import { formatMinorUnits } from '../../money.js';
import { dropForbiddenCharacters } from '../record.js';
import {
  checkoutEligible,
  issue,
  requiredLink,
  requiredText,
  searchEligible,
  sortIssues,
  textOf,
  variantOptions,
  type ChannelIssue,
  type ChannelItem,
  type ChannelSettings,
  type FlatProfile,
  checkedCondition,
  checkedGtin,
  imageLinks,
} from './profile.js';

export const OPENAI_COLUMNS = [
  'item_id',
  'title',
  'description',
  'url',
  'brand',
  'image_url',
  'additional_image_urls',
  'price',
  'availability',
  'group_id',
  'listing_has_variations',
  'variant_dict',
  'gtin',
  'mpn',
  'condition',
  'product_category',
  'material',
  'color',
  'size',
  'gender',
  'age_group',
  'seller_name',
  'seller_url',
  'store_country',
  'target_countries',
  'is_eligible_search',
  'is_eligible_checkout',
] as const;

/** OpenAI's availability values: ours, with `preorder` written `pre_order`. */
const AVAILABILITY: Readonly<Record<string, string>> = {
  in_stock: 'in_stock',
  out_of_stock: 'out_of_stock',
  preorder: 'pre_order',
  backorder: 'backorder',
};
const I = {
  itemId: requiredText('item_id', 100, 'item_id'),
  title: requiredText('title', 150, 'title'),
  description: requiredText('description', 5000, 'description'),
  url: requiredLink('url', undefined, 'product page (attributes.url)'),
  image: requiredLink('image_url', undefined, 'image'),
  brand: requiredText('brand', 70, 'brand'),
  seller: requiredText('seller_name', 70, 'seller_name'),
  priceInvalid: issue('price', 'invalid', 'error', 'price must be above zero'),
  availabilityInvalid: issue(
    'availability',
    'invalid',
    'error',
    'availability must be in_stock, out_of_stock, preorder or backorder',
  ),
  additionalImageInvalid: issue(
    'additional_image_urls',
    'invalid',
    'warning',
    'an additional image is not an http(s) URL: left out',
  ),
  gtinInvalid: issue('gtin', 'invalid', 'warning', 'gtin has no valid check digit: left out'),
  conditionInvalid: issue(
    'condition',
    'invalid',
    'warning',
    'condition is not new, refurbished or used: left out',
  ),
  variantDictMissing: issue(
    'variant_dict',
    'missing',
    'warning',
    'a variant (item_group_id) without color, size or material: agents cannot tell it apart',
  ),
};

/** One product as OpenAI's row, with what OpenAI would refuse in it. */
function mapOpenAi(
  p: CatalogueProduct,
  s: ChannelSettings,
  clean: (value: string) => string = dropForbiddenCharacters,
): ChannelItem {
  const issues: ChannelIssue[] = [];
  const a = p.attributes;
  const images = imageLinks(p, clean, isLinkAsGiven);
  if (images.dropped) issues.push(I.additionalImageInvalid);
  const givenAvailability = p.givenAvailability ?? p.availability;
  const availability = AVAILABILITY[givenAvailability] ?? '';
  const gtin = checkedGtin(a.gtin, I.gtinInvalid, issues);
  const condition = checkedCondition(a.condition, I.conditionInvalid, issues);
  const group = p.itemGroupId === undefined ? '' : clean(p.itemGroupId);
  const options = group === '' ? undefined : variantOptions(p, clean);
  if (group !== '' && options === undefined) issues.push(I.variantDictMissing);
  const search = searchEligible(p);
  const record = {
    item_id: clean(p.id),
    title: clean(p.name),
    description: p.description === null ? '' : clean(p.description),
    url: p.url === undefined ? '' : clean(p.url),
    brand: clean(p.brand),
    image_url: images.first,
    additional_image_urls: images.additional,
    price: `${formatMinorUnits(p.price.minor, p.price.currency)} ${p.price.currency}`,
    availability,
    group_id: group,
    listing_has_variations: group === '' ? 'false' : 'true',
    variant_dict: group === '' ? '' : (options ?? {}),
    gtin,
    mpn: clean(textOf(a.mpn)),
    condition,
    product_category: p.category === null ? '' : clean(p.category),
    material: clean(textOf(a.material)),
    color: clean(textOf(a.color)),
    size: clean(textOf(a.size)),
    gender: clean(textOf(a.gender)),
    age_group: clean(textOf(a.age_group)),
    seller_name: s.sellerName,
    seller_url: s.storeUrl,
    store_country: s.storeCountry,
    target_countries: s.targetCountries,
    is_eligible_search: search ? 'true' : 'false',
    is_eligible_checkout: checkoutEligible(p) ? 'true' : 'false',
  };
  I.itemId.check(record.item_id, issues);
  I.title.check(record.title, issues);
  I.description.check(record.description, issues);
  I.url.check(record.url, issues);
  I.brand.check(record.brand, issues);
  I.seller.check(record.seller_name, issues);
  I.image.check(record.image_url, issues);
  if (!(p.price.minor > 0)) issues.push(I.priceInvalid);
  if (availability === '') issues.push(I.availabilityInvalid);
  return { id: p.id, record, issues: sortIssues(issues) };
}

export const openaiProfile: FlatProfile = {
  name: 'openai',
  kind: 'flat',
  formats: ['jsonl', 'csv', 'tsv'],
  gzip: true,
  excludes: true,
  columns: OPENAI_COLUMNS,
  map: mapOpenAi,
};
