/**
 * Our products as ACP feed Products (spec version 2026-04-17, vendor/acp/schema.feed.json):
 * each product is one Variant; products sharing attributes.item_group_id are the variants of
 * one Product whose id is the group id. Prices stay in minor units.
 */

import type { CatalogueProduct } from '../catalogue/product.js';

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

const OPTION_NAMES: [key: string, name: string][] = [
  ['color', 'Color'],
  ['size', 'Size'],
  ['material', 'Material'],
];

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * One of our products as an ACP Variant (keys in the schema's order, for readable feeds).
 * URLs are published normalised; a page or image that is not an http(s) URL is left out.
 * Built key by key, not by spreading optional parts: feeds and the registry make one for
 * every product, and a spread costs an object and a slower copy each.
 */
export function toAcpVariant(product: CatalogueProduct, sellerName: string): AcpVariant {
  const attributes = product.attributes;
  const url = product.pageUrl;
  const gtin = nonEmptyString(attributes.gtin);
  const condition = nonEmptyString(attributes.condition);
  let options: { name: string; value: string }[] | undefined;
  for (const [key, name] of OPTION_NAMES) {
    const value = nonEmptyString(attributes[key]);
    if (value) (options ??= []).push({ name, value });
  }
  const images = product.imageUrls;
  const variant: Partial<AcpVariant> & Pick<AcpVariant, 'id' | 'title'> = {
    id: product.id,
    title: product.name,
  };
  if (product.description && product.description.trim() !== '') {
    variant.description = { plain: product.description };
  }
  if (url) variant.url = url;
  if (gtin) variant.barcodes = [{ type: 'GTIN', value: gtin }];
  variant.price = { amount: product.price.minor, currency: product.price.currency };
  variant.availability = { available: product.available, status: product.availability };
  if (product.category) variant.categories = [{ value: product.category, taxonomy: 'merchant' }];
  if (condition) variant.condition = [condition];
  if (options) variant.variant_options = options;
  if (images.length > 0) {
    const media: AcpMedia[] = [];
    for (const image of images) media.push({ type: 'image', url: image, alt_text: product.name });
    variant.media = media;
  }
  variant.seller = { name: sellerName };
  return variant as AcpVariant;
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
  const product: Partial<AcpProduct> & Pick<AcpProduct, 'id' | 'title'> = {
    id,
    title: sharedTitle(variants.map((v) => v.title)),
  };
  if (description) product.description = description;
  if (url) product.url = url;
  if (media) product.media = media;
  product.variants = variants;
  return product as AcpProduct;
}

/** Whether a UTF-16 unit is one `\s` matches (space, tab, line breaks, Unicode spaces). */
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return SPACE.test(String.fromCharCode(c));
}
const SPACE = /\s/;

/** Whether `text` splits into runs of `\s` and of other characters at `at` (or ends there). */
function isRunBoundary(text: string, at: number): boolean {
  return (
    at === 0 ||
    at === text.length ||
    isSpace(text.charCodeAt(at - 1)) !== isSpace(text.charCodeAt(at))
  );
}

/**
 * The words every title starts with, without a trailing separator; else the first title.
 * A word is a run of `\s` or of other characters (what `split(/(\s+)/)` gives), so the words
 * every title starts with end at the last run boundary of the first title, within the prefix
 * the titles share, that is a run boundary in each title: found in one pass over that prefix,
 * where splitting every title took most of a grouped feed's mapping.
 */
export function sharedTitle(titles: string[]): string {
  const first = titles[0] ?? '';
  let shared = first.length;
  for (let i = 1; i < titles.length; i++) {
    const title = titles[i]!;
    const max = Math.min(shared, title.length);
    let n = 0;
    while (n < max && title.charCodeAt(n) === first.charCodeAt(n)) n++;
    shared = n;
  }
  if (shared === first.length && titles.every((t) => t.length === first.length)) return first;
  let end = shared;
  while (end > 0 && !titles.every((t) => isRunBoundary(t, end))) end--;
  const prefix = first
    .slice(0, end)
    .replace(/[\s\-\u2013\u2014/,:;(|]+$/u, '')
    .trim();
  return prefix.length >= 3 ? prefix : first;
}
