import { z } from 'zod';
import { AGE_GROUPS, AVAILABILITIES, CONDITIONS, GENDERS } from '../catalogue/product.js';
import { isCurrency } from '../money.js';
import { CLIENT_ID_PATTERN, httpUrl, isValidGtin, JsonValue, text } from '../fields.js';
import { pageFields } from '../pagination.js';

export const PRODUCT_STATUSES = ['active', 'inactive', 'draft'] as const;
export const ProductStatus = z.enum(PRODUCT_STATUSES);

export const LIMITS = {
  name: 150,
  description: 5000,
  category: 750,
  images: 20,
  url: 2048,
  brand: 70,
  features: 50,
  feature: 500,
} as const;

const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be a three-letter upper-case ISO 4217 code')
  .refine(isCurrency, 'must be an ISO 4217 currency code');

/**
 * A category path, levels separated by ` > `. Spacing around `>` is normalised
 * ("Apparel>Shoes" is stored as "Apparel > Shoes"); empty levels are rejected.
 */
export const Category = text(LIMITS.category, { min: 1 })
  .transform((s) => s.split('>').map((level) => level.trim()))
  .check((ctx) => {
    if (ctx.value.some((level) => level.length === 0)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: 'must not have an empty level',
      });
    }
  })
  .transform((levels) => levels.join(' > '));

const Price = z.union([z.number(), z.string()], { error: 'must be a decimal number' });

export const Attributes = z
  .object({
    brand: text(LIMITS.brand, { min: 1 }).optional(),
    features: z
      .array(text(LIMITS.feature, { min: 1 }))
      .max(LIMITS.features)
      .optional(),
    url: httpUrl(LIMITS.url).optional(),
    gtin: z
      .string()
      .refine(isValidGtin, 'must be a GTIN-8, -12, -13 or -14 with a valid check digit')
      .optional(),
    mpn: text(70, { min: 1 }).optional(),
    condition: z.enum(CONDITIONS).optional(),
    availability: z.enum(AVAILABILITIES).optional(),
    inventory_quantity: z.int().min(0).max(1_000_000_000).optional(),
    item_group_id: z
      .string()
      .regex(CLIENT_ID_PATTERN, 'must be 1-100 letters, digits, ".", "_" or "-"')
      .optional(),
    color: text(100, { min: 1 }).optional(),
    size: text(100, { min: 1 }).optional(),
    material: text(200, { min: 1 }).optional(),
    gender: z.enum(GENDERS).optional(),
    age_group: z.enum(AGE_GROUPS).optional(),
    // Google's agentic checkout attributes (docs/feeds.md#channels, the google profile).
    native_commerce: z.boolean().optional(),
    merchant_item_id: text(100, { min: 1 }).optional(),
    consumer_notice: z
      .strictObject({
        type: z.enum(['legal_disclaimer', 'safety_warning', 'prop_65']),
        message: text(1000, { min: 1 }),
      })
      .optional(),
  })
  .catchall(JsonValue);

export type AttributesInput = z.infer<typeof Attributes>;

const productFields = {
  name: text(LIMITS.name, { min: 1 }),
  description: text(LIMITS.description).nullable(),
  price: Price,
  currency: Currency,
  status: ProductStatus,
  category: Category.nullable(),
  images: z.array(httpUrl(LIMITS.url)).max(LIMITS.images),
  attributes: Attributes,
};

export const ProductCreate = z.strictObject({
  id: z
    .string()
    .regex(CLIENT_ID_PATTERN, 'must be 1-100 letters, digits, ".", "_" or "-"')
    .optional(),
  name: productFields.name,
  description: productFields.description.optional(),
  price: productFields.price,
  currency: productFields.currency.optional(),
  status: productFields.status.optional(),
  category: productFields.category.optional(),
  images: productFields.images.optional(),
  attributes: productFields.attributes.optional(),
});
export type ProductCreateInput = z.infer<typeof ProductCreate>;

export const ProductUpdate = z.strictObject({
  name: productFields.name.optional(),
  description: productFields.description.optional(),
  price: productFields.price.optional(),
  currency: productFields.currency.optional(),
  status: productFields.status.optional(),
  category: productFields.category.optional(),
  images: productFields.images.optional(),
  attributes: productFields.attributes.optional(),
});
export type ProductUpdateInput = z.infer<typeof ProductUpdate>;

export const Product = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  price: z.number(),
  currency: z.string(),
  status: ProductStatus,
  category: z.string().nullable(),
  images: z.array(z.string()),
  attributes: z.record(z.string(), JsonValue),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Product = z.infer<typeof Product>;

export const Pagination = z.object({
  limit: z.int(),
  offset: z.int(),
  total: z.int(),
  has_more: z.boolean(),
});

export const ProductListQuery = z.strictObject({
  ...pageFields,
  category: Category.optional(),
  status: ProductStatus.optional(),
  /** attributes.brand, exactly. */
  brand: text(LIMITS.brand, { min: 1 }).optional(),
});
export type ProductListQuery = z.infer<typeof ProductListQuery>;

export const ProductList = z.object({ products: z.array(Product), pagination: Pagination });
