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
 */
export function toAcpVariant(product: CatalogueProduct, sellerName: string): AcpVariant {
  const attributes = product.attributes;
  const url = product.pageUrl;
  const gtin = nonEmptyString(attributes.gtin);
  const condition = nonEmptyString(attributes.condition);
  const options: { name: string; value: string }[] = [];
  for (const [key, name] of OPTION_NAMES) {
    const value = nonEmptyString(attributes[key]);
    if (value) options.push({ name, value });
  }
  const media: AcpMedia[] = product.imageUrls.map((image) => ({
    type: 'image',
    url: image,
    alt_text: product.name,
  }));
  return {
    id: product.id,
    title: product.name,
    ...(product.description && product.description.trim() !== ''
      ? { description: { plain: product.description } }
      : {}),
    ...(url ? { url } : {}),
    ...(gtin ? { barcodes: [{ type: 'GTIN', value: gtin }] } : {}),
    price: { amount: product.price.minor, currency: product.price.currency },
    availability: { available: product.available, status: product.availability },
    ...(product.category
      ? { categories: [{ value: product.category, taxonomy: 'merchant' }] }
      : {}),
    ...(condition ? { condition: [condition] } : {}),
    ...(options.length ? { variant_options: options } : {}),
    ...(media.length ? { media } : {}),
    seller: { name: sellerName },
  };
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
