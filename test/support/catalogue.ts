import type { CatalogueRow } from '../../src/domain/catalogue/product.js';

/** A product row as the store holds it; `attributes` and `images` are given as values. */
export function catalogueRow(
  fields: Partial<Omit<CatalogueRow, 'attributes' | 'images'>> & {
    attributes?: Record<string, unknown>;
    images?: unknown[];
  } = {},
): CatalogueRow {
  const { attributes, images, ...rest } = fields;
  return {
    id: 'SKU-1',
    name: 'Trail Shoe',
    description: 'A shoe for trails.',
    price_minor: 7999,
    currency: 'USD',
    status: 'active',
    category: 'Apparel > Shoes',
    created_at: '2026-11-21T00:00:00.000Z',
    updated_at: '2026-11-22T00:00:00.000Z',
    ...rest,
    images: JSON.stringify(images ?? ['https://img.example.com/a.jpg']),
    attributes: JSON.stringify(attributes ?? {}),
  };
}
