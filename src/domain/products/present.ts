import type { StoredProduct } from '../catalogue/product.js';
import { fromMinorUnits } from '../money.js';
import type { Product } from './schemas.js';

/**
 * A product as the API returns it: decimal price, images and attributes as stored. This is
 * the one definition of the API's product JSON (its type is the `Product` schema's, which
 * documents it); the store's fast path (db/sqlite/product-json.ts) writes the same bytes, and
 * test/db/sqlite/product-json.test.ts holds the two equal.
 */
export function apiProductOf(product: StoredProduct): Product {
  return {
    id: product.id,
    name: product.name,
    description: product.description,
    price: fromMinorUnits(product.price.minor, product.price.currency),
    currency: product.price.currency,
    status: product.status,
    category: product.category,
    images: product.images as string[],
    attributes: product.attributes as Product['attributes'],
    created_at: product.createdAt,
    updated_at: product.updatedAt,
  };
}
