/**
 * The catalogue's one reading of a product row. Every projection (the API's JSON, a feed
 * record, an ACP Variant) starts from a CatalogueProduct, so the rules that give a product
 * its brand, availability, links and variant group are written once, here.
 */
import type { CatalogueRow } from '../../db/queries/products.js';
import type { ProductStatus } from '../../db/schema.js';
import { normaliseHttpUrl } from './url.js';

export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'backorder'] as const;
export type Availability = (typeof AVAILABILITIES)[number];
/** The values the API takes for `attributes.condition`, `.gender` and `.age_group`. */
export const CONDITIONS = ['new', 'refurbished', 'used'] as const;
export const GENDERS = ['male', 'female', 'unisex'] as const;
export const AGE_GROUPS = ['newborn', 'infant', 'toddler', 'kids', 'adult'] as const;

const AVAILABILITY: ReadonlySet<string> = new Set(AVAILABILITIES);

export function isAvailability(value: unknown): value is Availability {
  return typeof value === 'string' && AVAILABILITY.has(value);
}

/** The columns of a product row the catalogue reads (db/queries/products.ts CATALOGUE_COLUMNS). */
export type { CatalogueRow };

/** What reading a product needs beyond its row. */
export interface CatalogueContext {
  /** STORE_NAME: the brand of products that name none. */
  storeName: string;
}

/** An amount in integer minor units of its currency (7999 USD is 79.99). */
export interface Money {
  minor: number;
  currency: string;
}

/** A product as the catalogue reads it. Values "as given" are what the merchant stored. */
export interface CatalogueProduct {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly status: ProductStatus;
  readonly category: string | null;
  readonly price: Money;
  /** The image URLs as given, in order (a number stored as an image reads as its text). */
  readonly images: readonly string[];
  /** The images that are http(s) URLs, normalised (see url.ts); the others are left out. */
  readonly imageUrls: readonly string[];
  /** The attributes object as stored (known and free keys); {} when the column is not one. */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** attributes.url as given: the product page on the store. */
  readonly url: string | undefined;
  /** attributes.url normalised, when it is an http(s) URL. */
  readonly pageUrl: string | undefined;
  /** attributes.brand when it names one. */
  readonly givenBrand: string | undefined;
  /** The brand: as given, else the store's own (STORE_NAME). */
  readonly brand: string;
  /** attributes.availability as given, valid or not. */
  readonly givenAvailability: string | undefined;
  /** The availability: as given when it is one we know, else out_of_stock at a stock of 0, else in_stock. */
  readonly availability: Availability;
  /** Whether an agent can buy it now or soon: every availability but out_of_stock. */
  readonly available: boolean;
  /** attributes.inventory_quantity as given. */
  readonly inventoryQuantity: string | undefined;
  /** attributes.item_group_id as given. */
  readonly itemGroupId: string | undefined;
  /** The variant group: products sharing attributes.item_group_id; else the product alone (its id). */
  readonly variantGroup: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A product as the row alone says it, before the store's settings: what the API shows. */
export type StoredProduct = Omit<CatalogueProduct, 'brand'>;

/** A value as text: a string as it is, a finite number written out; else undefined. */
export function givenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The brand attributes name: a non-empty string, else none (also what the brand column keeps). */
export function givenBrandOf(attributes: Readonly<Record<string, unknown>>): string | undefined {
  const brand = attributes.brand;
  return typeof brand === 'string' && brand !== '' ? brand : undefined;
}

/** A product's brand: the one it names, else the store's own. */
export function brandOrStore(given: string | null | undefined, storeName: string): string {
  return given ?? storeName;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function attributesOf(text: string): Record<string, unknown> {
  const value = parseJson(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function imagesOf(text: string): string[] {
  const value = parseJson(text);
  if (!Array.isArray(value)) return [];
  // The usual array holds only strings: keep it as parsed.
  let onlyStrings = true;
  for (let i = 0; i < value.length && onlyStrings; i++) onlyStrings = typeof value[i] === 'string';
  if (onlyStrings) return value as string[];
  const images: string[] = [];
  for (const v of value) {
    const s = givenText(v);
    if (s !== undefined) images.push(s);
  }
  return images;
}

// A class, not an object literal: one hidden class for every product the pipeline reads, and
// the normalised URLs (a URL parse each) are worked out only when a projection asks.
class ReadProduct implements CatalogueProduct {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly status: ProductStatus;
  readonly category: string | null;
  readonly price: Money;
  readonly images: readonly string[];
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly url: string | undefined;
  readonly givenBrand: string | undefined;
  readonly brand: string;
  readonly givenAvailability: string | undefined;
  readonly availability: Availability;
  readonly available: boolean;
  readonly inventoryQuantity: string | undefined;
  readonly itemGroupId: string | undefined;
  readonly variantGroup: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  #pageUrl: string | undefined | null = null;
  #imageUrls: string[] | null = null;

  constructor(row: CatalogueRow, storeName: string) {
    const a = attributesOf(row.attributes);
    this.id = row.id;
    this.name = row.name;
    this.description = row.description;
    this.status = row.status;
    this.category = row.category;
    this.price = { minor: row.price_minor, currency: row.currency };
    this.images = imagesOf(row.images);
    this.attributes = a;
    this.url = givenText(a.url);
    this.givenBrand = givenBrandOf(a);
    this.brand = brandOrStore(this.givenBrand, storeName);
    this.givenAvailability = givenText(a.availability);
    this.inventoryQuantity = givenText(a.inventory_quantity);
    this.availability = isAvailability(this.givenAvailability)
      ? this.givenAvailability
      : this.inventoryQuantity === '0'
        ? 'out_of_stock'
        : 'in_stock';
    this.available = this.availability !== 'out_of_stock';
    this.itemGroupId = givenText(a.item_group_id);
    this.variantGroup = this.itemGroupId ?? row.id;
    this.createdAt = row.created_at;
    this.updatedAt = row.updated_at;
  }

  get pageUrl(): string | undefined {
    if (this.#pageUrl === null) this.#pageUrl = normaliseHttpUrl(this.url);
    return this.#pageUrl;
  }

  get imageUrls(): readonly string[] {
    if (this.#imageUrls === null) {
      const urls: string[] = [];
      for (const image of this.images) {
        const url = normaliseHttpUrl(image);
        if (url) urls.push(url);
      }
      this.#imageUrls = urls;
    }
    return this.#imageUrls;
  }
}

/** Reads a product row once into the catalogue's product. */
export function readCatalogueProduct(
  row: CatalogueRow,
  context: CatalogueContext,
): CatalogueProduct {
  return new ReadProduct(row, context.storeName);
}

/** Reads a product row without the store's settings (the API shows the brand only as given). */
export function readStoredProduct(row: CatalogueRow): StoredProduct {
  return new ReadProduct(row, '');
}
