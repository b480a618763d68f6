import type { Db } from '../../db/store.js';
import { pageStart } from './page-anchors.js';
import type { ProductRow, ProductRowUpdate } from '../../db/schema.js';
import {
  countProducts,
  deleteProductRow,
  findExistingProductIds,
  findProductForUpdate,
  findProductJsonById,
  insertProduct,
  insertProducts,
  findProductPageJson,
  pageInCreationOrder,
  updateProductRow,
  type ProductFilter,
  joinProductWrites,
} from '../../db/queries/products.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { announceChange } from '../changes.js';
import { recordEvent, recordEvents } from '../events.js';
import { givenBrandOf, readStoredProduct } from '../catalogue/product.js';
import { fromMinorUnits, MoneyError, toMinorUnits } from '../money.js';
import { apiProductOf } from './present.js';
import type { Product, ProductCreateInput, ProductUpdateInput } from './schemas.js';
import { presentPagination } from '../pagination.js';

export interface ProductDefaults {
  currency: string;
}

/** A product row as the API returns it (see apiProductOf). */
export function presentProduct(row: ProductRow): Product {
  return apiProductOf(readStoredProduct(row));
}

function priceToMinor(price: number | string, currency: string): number {
  try {
    return toMinorUnits(price, currency);
  } catch (err) {
    if (err instanceof MoneyError) throw invalidField('price', err.message);
    throw err;
  }
}

function brandOf(attributes: Record<string, unknown>): string | null {
  return givenBrandOf(attributes) ?? null;
}

/** A product as the API's JSON (UTF-8): `presentProduct`, serialised by the store. */
export async function getProductJson(db: Db, id: string): Promise<Buffer> {
  const json = await findProductJsonById(db, id);
  if (!json) throw notFound('product', id);
  return json;
}

/** A page of products as the API's JSON (UTF-8): `{ products, pagination }`. */
export async function listProductsJson(
  db: Db,
  filter: ProductFilter,
  page: { limit: number; offset: number },
): Promise<Buffer> {
  // The reads go through one connection in turn (on SQLite, its reader), so they see the same
  // snapshot unless a write lands between them; the total is advisory, as in every offset API.
  const total = await countProducts(db, filter);
  const creationOrder =
    (!filter.category && filter.brand === undefined) ||
    pageInCreationOrder(
      total,
      await countProducts(db, { status: filter.status }),
      page.offset + page.limit,
    );
  // Past the last match there is nothing to read (the category index would still be walked).
  const { json, count } =
    page.offset >= total
      ? { json: '[]', count: 0 }
      : await findProductPageJson(
          db,
          filter,
          {
            limit: page.limit,
            ...(creationOrder ? await pageStart(db, filter, page.offset) : page),
          },
          { creationOrder },
        );
  const pagination = presentPagination(page, count, total);
  // One copy of the body: the page's text and its pagination encoded once.
  return Buffer.from(`{"products":${json},"pagination":${JSON.stringify(pagination)}}`);
}

/** The row a create input makes (the price checked against its currency). */
function newProductRow(
  input: ProductCreateInput,
  defaults: ProductDefaults,
  now: Date,
): ProductRow {
  const currency = input.currency ?? defaults.currency;
  const attributes = input.attributes ?? {};
  const stamp = now.toISOString();
  return {
    id: input.id ?? newId('prod'),
    name: input.name,
    description: input.description ?? null,
    price_minor: priceToMinor(input.price, currency),
    currency,
    status: input.status ?? 'active',
    category: input.category ?? null,
    images: JSON.stringify(input.images ?? []),
    attributes: JSON.stringify(attributes),
    brand: brandOf(attributes),
    created_at: stamp,
    updated_at: stamp,
  };
}

/**
 * Creates a product and records product.created in the same transaction (the caller's, when
 * `db` is one); catalogueChanged is announced after the commit.
 */
export async function createProduct(
  db: Executor,
  input: ProductCreateInput,
  defaults: ProductDefaults,
  now: Date = new Date(),
): Promise<Product> {
  const row = newProductRow(input, defaults, now);
  return withTransaction(db, async (trx) => {
    await joinProductWrites(trx);
    // The id's unique index decides: a racing create of the same id waits for this one.
    if (!(await insertProduct(trx, row))) {
      throw new AppError('already_exists', `A product with id '${row.id}' already exists.`, {
        field: 'id',
        reason: 'is already taken',
      });
    }
    const product = presentProduct(row);
    await recordEvent(trx, 'product.created', product, now);
    announceChange(trx, 'catalogueChanged');
    return product;
  });
}

/**
 * Creates many products at once, as createProduct creates each (the same rows, the same
 * product.created events, in input order), with multi-row inserts: for bulk writers (the
 * integrations' sync). Every input is checked before anything is written; an id taken is 409.
 */
export async function createProducts(
  db: Executor,
  inputs: ProductCreateInput[],
  defaults: ProductDefaults,
  now: Date = new Date(),
): Promise<Product[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((input) => newProductRow(input, defaults, now));
  return withTransaction(db, async (trx) => {
    await joinProductWrites(trx);
    // An id taken is refused here; one a racing create takes meanwhile, by the id's unique
    // index (the insert waits for that create and fails if it commits).
    const taken = await findExistingProductIds(
      trx,
      rows.map((r) => r.id),
    );
    if (taken.length > 0) {
      throw new AppError('already_exists', `A product with id '${taken[0]}' already exists.`, {
        field: 'id',
        reason: 'is already taken',
      });
    }
    await insertProducts(trx, rows);
    const products = rows.map(presentProduct);
    await recordEvents(trx, 'product.created', products, now);
    announceChange(trx, 'catalogueChanged');
    return products;
  });
}

/**
 * Changes the fields the input carries (attributes, when given, is replaced whole) and
 * records product.updated. A request that changes nothing returns the product untouched.
 */
export async function updateProduct(
  db: Executor,
  id: string,
  input: ProductUpdateInput,
  now: Date = new Date(),
): Promise<Product> {
  return withTransaction(db, async (trx) => {
    await joinProductWrites(trx);
    const before = await findProductForUpdate(trx, id);
    if (!before) throw notFound('product', id);
    return changeProduct(trx, before, input, now);
  });
}

/**
 * updateProduct's change, for a writer that has joined the product writers and holds the
 * product's row already (read FOR UPDATE in its transaction: a sync's apply), so it is not
 * read twice.
 */
export async function changeProduct(
  trx: Executor,
  before: ProductRow,
  input: ProductUpdateInput,
  now: Date,
): Promise<Product> {
  const id = before.id;
  const patch: ProductRowUpdate = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.description !== undefined) patch.description = input.description;
  if (input.status !== undefined) patch.status = input.status;
  if (input.category !== undefined) patch.category = input.category;
  if (input.images !== undefined) patch.images = JSON.stringify(input.images);
  if (input.attributes !== undefined) {
    patch.attributes = JSON.stringify(input.attributes);
    patch.brand = brandOf(input.attributes);
  }
  const currency = input.currency ?? before.currency;
  if (input.currency !== undefined) patch.currency = input.currency;
  if (input.price !== undefined) {
    patch.price_minor = priceToMinor(input.price, currency);
  } else if (currency !== before.currency) {
    // The stored amount means something else in another currency: keep the decimal price.
    const decimal = fromMinorUnits(before.price_minor, before.currency);
    try {
      patch.price_minor = toMinorUnits(decimal, currency);
    } catch (err) {
      if (!(err instanceof MoneyError)) throw err;
      throw invalidField(
        'currency',
        `cannot change to ${currency} while the price ${decimal} ${err.message}; send a new price with it`,
      );
    }
  }
  const changed = (Object.keys(patch) as (keyof ProductRow)[]).filter(
    (k) => patch[k] !== before[k],
  );
  if (changed.length === 0) return presentProduct(before);
  patch.updated_at = now.toISOString();
  await updateProductRow(trx, id, before.status, patch);
  const product = presentProduct({ ...before, ...patch } as ProductRow);
  await recordEvent(trx, 'product.updated', product, now);
  announceChange(trx, 'catalogueChanged');
  return product;
}

/** Deletes a product and records product.deleted with its last state. */
export async function deleteProduct(
  db: Executor,
  id: string,
  now: Date = new Date(),
): Promise<Product> {
  return withTransaction(db, async (trx) => {
    await joinProductWrites(trx);
    const before = await findProductForUpdate(trx, id);
    if (!before) throw notFound('product', id);
    await deleteProductRow(trx, id, before.status);
    const product = presentProduct(before);
    await recordEvent(trx, 'product.deleted', product, now);
    announceChange(trx, 'catalogueChanged');
    return product;
  });
}
