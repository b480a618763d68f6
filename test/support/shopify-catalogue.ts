import { gtin13 } from './platform-catalogue.js';

/**
 * The local Shopify's catalogue: its product and variant records, the synthetic products
 * tests and benchmarks generate, and the REST shapes Shopify sends them in (the storefront's
 * /products.json and the products/create|update webhooks).
 */

export interface ShopVariant {
  id: number;
  title: string;
  sku: string | null;
  barcode: string | null;
  /** A decimal string, as Shopify's Money scalar; null makes a bad product. */
  price: string | null;
  compareAtPrice: string | null;
  inventoryQuantity: number;
  availableForSale: boolean;
  options: { name: string; value: string }[];
  image: string | null;
}

export interface ShopProduct {
  id: number;
  title: string;
  descriptionHtml: string;
  vendor: string;
  productType: string;
  handle: string;
  status: 'ACTIVE' | 'DRAFT' | 'ARCHIVED';
  tags: string[];
  /** The Shopify taxonomy's full name, or null. */
  category: string | null;
  images: string[];
  variants: ShopVariant[];
  /** Published on the online store (listed by /products.json, has an onlineStoreUrl). */
  published: boolean;
}

/** Product `id`, as synthetic products are generated: two sizes, a GTIN on the first. */
export function syntheticShopProduct(id: number): ShopProduct {
  const price = `${10 + (id % 90)}.${String(id % 100).padStart(2, '0')}`;
  return {
    id,
    title: `Synthetic product ${id}`,
    descriptionHtml: `<p>The <strong>${id}th</strong> product &amp; its story.</p>`,
    vendor: `Brand ${id % 7}`,
    productType: 'Shirts',
    handle: `synthetic-product-${id}`,
    status: 'ACTIVE',
    tags: ['synthetic', `batch-${id % 3}`],
    category: 'Apparel & Accessories > Clothing > Shirts',
    images: [`https://cdn.shopify.example/files/p${id}.jpg`],
    published: true,
    variants: ['S', 'M'].map((size, i) => ({
      id: id * 100 + i + 1,
      title: size,
      sku: `SYN-${id}-${size}`,
      barcode: i === 0 ? gtin13(id * 100 + i + 1) : null,
      price,
      compareAtPrice: null,
      inventoryQuantity: (id + i) % 5,
      availableForSale: (id + i) % 5 !== 0,
      options: [{ name: 'Size', value: size }],
      image: null,
    })),
  };
}

export const gid = (type: string, id: number | string) => `gid://shopify/${type}/${id}`;

export function storefrontProduct(p: ShopProduct) {
  const images = p.images.map((src, i) => ({
    id: p.id * 1000 + i + 1,
    position: i + 1,
    product_id: p.id,
    variant_ids: p.variants.filter((v) => v.image === src).map((v) => v.id),
    src,
    width: 800,
    height: 800,
  }));
  return {
    id: p.id,
    title: p.title,
    handle: p.handle,
    body_html: p.descriptionHtml,
    published_at: '2026-01-01T00:00:00-05:00',
    created_at: '2026-01-01T00:00:00-05:00',
    updated_at: '2026-01-01T00:00:00-05:00',
    vendor: p.vendor,
    product_type: p.productType,
    tags: p.tags,
    variants: p.variants.map((v, i) => ({
      id: v.id,
      title: v.title,
      option1: v.options[0]?.value ?? null,
      option2: v.options[1]?.value ?? null,
      option3: v.options[2]?.value ?? null,
      sku: v.sku ?? '',
      requires_shipping: true,
      taxable: true,
      featured_image: v.image ? { src: v.image } : null,
      available: v.availableForSale,
      price: v.price,
      grams: 200,
      compare_at_price: v.compareAtPrice,
      position: i + 1,
      product_id: p.id,
    })),
    images,
    options: optionsOf(p),
  };
}

function optionsOf(p: ShopProduct) {
  const names = p.variants[0]?.options.map((o) => o.name) ?? [];
  return names.map((name, i) => ({
    name,
    position: i + 1,
    values: [...new Set(p.variants.map((v) => v.options[i]?.value ?? ''))],
  }));
}

/** A product as Shopify's products/create and products/update webhooks send it (REST JSON). */
export function webhookProduct(p: ShopProduct) {
  const imageId = (src: string | null) => {
    const i = src ? p.images.indexOf(src) : -1;
    return i === -1 ? null : p.id * 1000 + i + 1;
  };
  return {
    id: p.id,
    admin_graphql_api_id: gid('Product', p.id),
    title: p.title,
    body_html: p.descriptionHtml,
    vendor: p.vendor,
    product_type: p.productType,
    handle: p.handle,
    status: p.status.toLowerCase(),
    published_at: p.published ? '2026-01-01T00:00:00-05:00' : null,
    tags: p.tags.join(', '),
    category: p.category
      ? {
          admin_graphql_api_id: 'gid://shopify/TaxonomyCategory/aa-1',
          name: p.category.split(' > ').at(-1),
          full_name: p.category,
        }
      : null,
    variants: p.variants.map((v, i) => ({
      id: v.id,
      product_id: p.id,
      title: v.title,
      price: v.price,
      sku: v.sku,
      barcode: v.barcode,
      compare_at_price: v.compareAtPrice,
      position: i + 1,
      inventory_policy: 'deny',
      inventory_management: 'shopify',
      inventory_quantity: v.inventoryQuantity,
      option1: v.options[0]?.value ?? null,
      option2: v.options[1]?.value ?? null,
      option3: v.options[2]?.value ?? null,
      image_id: imageId(v.image),
      admin_graphql_api_id: gid('ProductVariant', v.id),
    })),
    options: optionsOf(p).map((o) => ({ ...o, product_id: p.id })),
    images: p.images.map((src, i) => ({
      id: p.id * 1000 + i + 1,
      product_id: p.id,
      position: i + 1,
      src,
    })),
  };
}
