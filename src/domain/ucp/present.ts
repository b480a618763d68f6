/**
 * Our products as UCP catalog products (vendor/ucp/schemas/shopping/types/product.json). A
 * UCP product is the ACP Product the registry publishes (domain/discovery/acp.ts), so each is
 * projected from the ACP one: the same variant groups, ids, titles, prices in minor units,
 * media, merchant categories and availability; UCP's required descriptions fall back to the
 * title, option values are `label`s, and the product gains its `price_range` and `options`.
 */
import type { CatalogueProduct } from '../catalogue/product.js';
import { toAcpProduct, toAcpVariant, type AcpVariant } from '../discovery/acp.js';

export interface UcpPrice {
  amount: number;
  currency: string;
}

export interface UcpVariant {
  id: string;
  title: string;
  description: { plain: string };
  url?: string;
  barcodes?: { type: string; value: string }[];
  categories?: { value: string; taxonomy: string }[];
  price: UcpPrice;
  availability: { available: boolean; status: string };
  options?: { name: string; label: string }[];
  media?: { type: string; url: string; alt_text?: string }[];
  seller: { name: string };
  inputs?: { id: string; match: 'exact' | 'featured' }[];
}

export interface UcpProduct {
  id: string;
  title: string;
  description: { plain: string };
  url?: string;
  categories?: { value: string; taxonomy: string }[];
  price_range: { min: UcpPrice; max: UcpPrice };
  media?: { type: string; url: string; alt_text?: string }[];
  options?: { name: string; values: { label: string }[] }[];
  variants: UcpVariant[];
}

function ucpVariant(v: AcpVariant): UcpVariant {
  return {
    id: v.id,
    title: v.title,
    description: v.description ?? { plain: v.title },
    ...(v.url ? { url: v.url } : {}),
    ...(v.barcodes ? { barcodes: v.barcodes } : {}),
    ...(v.categories ? { categories: v.categories } : {}),
    price: v.price,
    availability: v.availability,
    ...(v.variant_options
      ? { options: v.variant_options.map((o) => ({ name: o.name, label: o.value })) }
      : {}),
    ...(v.media ? { media: v.media } : {}),
    seller: v.seller,
  };
}

/** The options of a product: each option name its variants use, with their distinct values. */
function optionsOf(variants: readonly UcpVariant[]): UcpProduct['options'] {
  const options = new Map<string, string[]>();
  for (const v of variants) {
    for (const o of v.options ?? []) {
      const labels = options.get(o.name) ?? [];
      if (!labels.includes(o.label)) labels.push(o.label);
      options.set(o.name, labels);
    }
  }
  return [...options].map(([name, labels]) => ({
    name,
    values: labels.map((label) => ({ label })),
  }));
}

/**
 * The UCP product of one variant group (its products in group order), with the featured
 * variant first: `featured` when given, else the one carrying the group's own id, else the
 * first. The price range is over the variants in the featured variant's currency.
 */
export function toUcpProduct(
  groupId: string,
  products: readonly CatalogueProduct[],
  sellerName: string,
  featured?: string,
): UcpProduct {
  const acp = toAcpProduct(
    groupId,
    products.map((p) => toAcpVariant(p, sellerName)),
  );
  const variants = acp.variants.map(ucpVariant);
  const lead = variants.findIndex((v) => v.id === (featured ?? groupId));
  if (lead > 0) variants.unshift(...variants.splice(lead, 1));
  const currency = variants[0]!.price.currency;
  const amounts = variants.filter((v) => v.price.currency === currency).map((v) => v.price.amount);
  const categories = variants[0]!.categories;
  const options = optionsOf(variants);
  return {
    id: acp.id,
    title: acp.title,
    description: acp.description ?? { plain: acp.title },
    ...(acp.url ? { url: acp.url } : {}),
    ...(categories ? { categories } : {}),
    price_range: {
      min: { amount: Math.min(...amounts), currency },
      max: { amount: Math.max(...amounts), currency },
    },
    ...(acp.media ? { media: acp.media } : {}),
    ...(options?.length ? { options } : {}),
    variants,
  };
}
