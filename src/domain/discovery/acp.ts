/**
 * Our products as ACP feed Products (spec version 2026-04-17, vendor/acp/schema.feed.json):
 * each product is one Variant; products sharing attributes.item_group_id are the variants of
 * one Product whose id is the group id. Prices stay in minor units.
 */

export const ACP_VERSION = '2026-04-17';

export interface AcpPrice {
  amount: number;
  currency: string;
}

export interface AcpMedia {
  type: 'image';
  url: string;
  alt_text?: string;
}

export interface AcpVariant {
  id: string;
  title: string;
  description?: { plain: string };
  url?: string;
  barcodes?: { type: string; value: string }[];
  price: AcpPrice;
  availability: { available: boolean; status: string };
  categories?: { value: string; taxonomy: string }[];
  condition?: string[];
  variant_options?: { name: string; value: string }[];
  media?: AcpMedia[];
  seller: { name: string };
}

export interface AcpProduct {
  id: string;
  title: string;
  description?: { plain: string };
  url?: string;
  media?: AcpMedia[];
  variants: AcpVariant[];
}

/** The columns of a product row the registry publishes. */
export interface CatalogueRow {
  id: string;
  name: string;
  description: string | null;
  price_minor: number;
  currency: string;
  category: string | null;
  /** JSON array of image URLs. */
  images: string;
  /** JSON object. */
  attributes: string;
  updated_at: string;
}

const OPTION_NAMES: [key: string, name: string][] = [
  ['color', 'Color'],
  ['size', 'Size'],
  ['material', 'Material'],
];

const AVAILABILITY = new Set(['in_stock', 'out_of_stock', 'preorder', 'backorder']);

/**
 * An absolute http(s) URL in the normalised form the WHATWG parser gives (spaces and quotes
 * percent-encoded), so it is a valid RFC 3986 URI; anything else is dropped.
 */
export function normaliseHttpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return undefined;
  return url.href;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** One of our products as an ACP Variant (keys in the schema's order, for readable feeds). */
export function toAcpVariant(
  row: CatalogueRow,
  attributes: Record<string, unknown>,
  sellerName: string,
): AcpVariant {
  const stated = typeof attributes.availability === 'string' ? attributes.availability : undefined;
  const status =
    stated && AVAILABILITY.has(stated)
      ? stated
      : attributes.inventory_quantity === 0
        ? 'out_of_stock'
        : 'in_stock';
  const url = normaliseHttpUrl(attributes.url);
  const gtin = nonEmptyString(attributes.gtin);
  const condition = nonEmptyString(attributes.condition);
  const options: { name: string; value: string }[] = [];
  for (const [key, name] of OPTION_NAMES) {
    const value = nonEmptyString(attributes[key]);
    if (value) options.push({ name, value });
  }
  const media = mediaOf(row.images, row.name);
  return {
    id: row.id,
    title: row.name,
    ...(row.description && row.description.trim() !== ''
      ? { description: { plain: row.description } }
      : {}),
    ...(url ? { url } : {}),
    ...(gtin ? { barcodes: [{ type: 'GTIN', value: gtin }] } : {}),
    price: { amount: row.price_minor, currency: row.currency },
    availability: { available: status !== 'out_of_stock', status },
    ...(row.category ? { categories: [{ value: row.category, taxonomy: 'merchant' }] } : {}),
    ...(condition ? { condition: [condition] } : {}),
    ...(options.length ? { variant_options: options } : {}),
    ...(media.length ? { media } : {}),
    seller: { name: sellerName },
  };
}

function mediaOf(imagesJson: string, alt: string): AcpMedia[] {
  let images: unknown;
  try {
    images = JSON.parse(imagesJson);
  } catch {
    return [];
  }
  if (!Array.isArray(images)) return [];
  const media: AcpMedia[] = [];
  for (const image of images) {
    const url = normaliseHttpUrl(image);
    if (url) media.push({ type: 'image', url, alt_text: alt });
  }
  return media;
}

/**
 * The ACP Product of one variant group. Its title is what the variants' names share
 * ("Trail Shoe - 9", "Trail Shoe - 10" -> "Trail Shoe"), its page and pictures are those of
 * the variant that carries the group's own id, else of the first variant.
 */
export function toAcpProduct(id: string, variants: AcpVariant[]): AcpProduct {
  const lead = variants.find((v) => v.id === id) ?? variants[0]!;
  const description = lead.description ?? variants.find((v) => v.description)?.description;
  const url = lead.url ?? variants.find((v) => v.url)?.url;
  const media = lead.media ?? variants.find((v) => v.media)?.media;
  return {
    id,
    title: sharedTitle(variants.map((v) => v.title)),
    ...(description ? { description } : {}),
    ...(url ? { url } : {}),
    ...(media ? { media } : {}),
    variants,
  };
}

/** The words every title starts with, without a trailing separator; else the first title. */
export function sharedTitle(titles: string[]): string {
  const first = titles[0] ?? '';
  if (titles.every((t) => t === first)) return first;
  const split = titles.map((t) => t.split(/(\s+)/));
  const common: string[] = [];
  for (let i = 0; i < split[0]!.length; i++) {
    const word = split[0]![i]!;
    if (!split.every((words) => words[i] === word)) break;
    common.push(word);
  }
  const prefix = common
    .join('')
    .replace(/[\s\-\u2013\u2014/,:;(|]+$/u, '')
    .trim();
  return prefix.length >= 3 ? prefix : first;
}
