import { hash } from 'node:crypto';
import type { z } from 'zod';
import type { IntegrationProductRow, ProductRow } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { findProductForUpdate, findProductsForUpdate } from '../../db/queries/products.js';
import {
  findLiveMappingsOfGroups,
  findMappings,
  insertMappings,
  lockIntegrationApply,
  pageUnstagedLiveMappings,
  updateMapping,
} from '../../db/queries/integrations.js';
import { AppError } from '../../errors.js';
import { newSortableId } from '../../ids.js';
import { MoneyError, toMinorUnits } from '../money.js';
import { changeProduct, createProducts, presentProduct } from '../products/products.js';
import { ProductCreate, type ProductCreateInput } from '../products/schemas.js';
import type { SyncError } from './schemas.js';
import type { SourceItem, SourceProduct } from './source.js';
import { screenItem } from './item-text.js';
import { isAcceptableText } from '../../text.js';
import type { Pacer } from '../../runtime/pace.js';

/** At most this many item errors are kept per run (the count goes on). */
export const MAX_ERRORS = 100;

/** New products written together (one multi-row insert), between the event loop's turns. */
const CREATE_CHUNK = 100;

export interface SyncCounts {
  fetched: number;
  created: number;
  updated: number;
  unchanged: number;
  deactivated: number;
  failed: number;
  errors: SyncError[];
}

export function newCounts(): SyncCounts {
  return {
    fetched: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    deactivated: 0,
    failed: 0,
    errors: [],
  };
}

function fail(counts: SyncCounts, error: SyncError): void {
  counts.failed++;
  if (counts.errors.length < MAX_ERRORS) counts.errors.push(error);
}

/**
 * What a product is made from, hashed: the same platform item gives the same fingerprint, so
 * an item whose fingerprint matches its mapping (and whose product still exists) is skipped
 * before it is validated, written or announced.
 */
export function fingerprintOf(product: SourceProduct, currency: string): string {
  // One-shot hash (no Hash object per item): the same digest as update(currency), '\n', json.
  return hash('sha256', `${currency}\n${JSON.stringify(product)}`, 'base64url');
}

function issueOf(error: z.ZodError): { field: string; reason: string } {
  const issue = error.issues[0]!;
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]!);
  const field = path.map(String).join('.') || 'product';
  if (issue.code === 'unrecognized_keys') return { field, reason: 'is not a known field' };
  if (issue.code === 'invalid_type' && issue.input === undefined)
    return { field, reason: 'is required' };
  return { field, reason: issue.message };
}

interface Valid {
  externalId: string;
  groupId: string | null;
  fingerprint: string;
  input: ProductCreateInput & { currency: string };
  productId: string;
  /** Its product exists (else it is created, also under a mapped id whose product is gone). */
  present: boolean;
  /** A mapping row exists. */
  mapped: boolean;
}

/**
 * A batch's items, screened: text a store cannot hold becomes a failed item (CONTRACT part 6)
 * before anything is looked up or staged; failed items are counted with their reasons, and
 * `kept` hears the external id of each (still on the platform: its product, from an earlier
 * good version, is kept as it is). Returns the products. `count`: count each item as fetched.
 */
function screenBatch(
  items: SourceItem[],
  counts: SyncCounts,
  options: { count: boolean; kept: (externalId: string) => void },
): Extract<SourceItem, { kind: 'product' }>[] {
  const products: Extract<SourceItem, { kind: 'product' }>[] = [];
  for (const given of items) {
    const item = screenItem(given);
    if (item.kind === 'error') {
      if (options.count) counts.fetched++;
      if (item.externalId !== null) options.kept(item.externalId);
      fail(counts, { external_id: item.externalId, field: item.field, reason: item.reason });
    } else if (item.kind === 'product') {
      if (options.count) counts.fetched++;
      products.push(item);
    }
  }
  return products;
}

/**
 * Writes a batch of platform items in the caller's transaction (or one of its own): each new
 * item becomes a product (`prod_` + a new id, kept in the mapping), each changed one updates
 * its product, through the products' own create and update, so they emit product.created and
 * product.updated as an API write does; an unchanged item writes nothing. An item that fails
 * validation fails alone. `seen` collects the external ids met (for the deactivation pass).
 */
export async function applyItems(
  db: Executor,
  integrationId: string,
  items: SourceItem[],
  options: {
    defaultCurrency: string;
    now: Date;
    counts: SyncCounts;
    seen?: Set<string>;
    /** The items were counted (fetched) when they were staged (see stageItems). */
    counted?: boolean;
    /** Gives the event loop its turns between items (a sync's apply). */
    pacer?: Pacer;
  },
): Promise<void> {
  const { counts, now } = options;
  const products = screenBatch(items, counts, {
    count: !options.counted,
    kept: (externalId) => options.seen?.add(externalId),
  });
  if (products.length === 0) return;
  await withTransaction(db, async (trx) => {
    // The integration's mappings are decided on below: its apply lock first.
    await lockIntegrationApply(trx, integrationId);
    const mappings = new Map(
      (await findMappings(trx, integrationId, [...new Set(products.map((p) => p.externalId))])).map(
        (m) => [m.external_id, m],
      ),
    );
    const valid: Valid[] = [];
    for (const item of products) {
      options.seen?.add(item.externalId);
      const currency = item.product.currency ?? options.defaultCurrency;
      const fingerprint = fingerprintOf(item.product, currency);
      const mapping = mappings.get(item.externalId);
      if (mapping && mapping.fingerprint === fingerprint && Number(mapping.present) === 1) {
        counts.unchanged++;
        continue;
      }
      const parsed = ProductCreate.safeParse(item.product);
      if (!parsed.success) {
        fail(counts, { external_id: item.externalId, ...issueOf(parsed.error) });
        continue;
      }
      try {
        toMinorUnits(parsed.data.price, currency);
      } catch (err) {
        if (!(err instanceof MoneyError)) throw err;
        fail(counts, { external_id: item.externalId, field: 'price', reason: err.message });
        continue;
      }
      const present = mapping !== undefined && Number(mapping.present) === 1;
      const productId = mapping?.product_id ?? newSortableId('prod', 16, now.getTime());
      valid.push({
        externalId: item.externalId,
        groupId: parsed.data.attributes?.item_group_id ?? null,
        fingerprint,
        input: { ...parsed.data, currency },
        productId,
        present,
        mapped: mapping !== undefined,
      });
      // A later item of the same id in this batch compares with this one.
      mappings.set(item.externalId, {
        integration_id: integrationId,
        external_id: item.externalId,
        group_id: null,
        product_id: productId,
        fingerprint,
        updated_at: '',
        present: 1,
      });
    }
    // The products to update, locked: one deleted through the API since its mapping was read
    // is made again under its id, as one deleted before the run is.
    const existing = await findProductsForUpdate(
      trx,
      valid.filter((item) => item.present).map((item) => item.productId),
    );
    const creates: Valid[] = [];
    for (const item of valid) {
      const before = item.present ? existing.get(item.productId) : undefined;
      if (!before) {
        creates.push(item);
        continue;
      }
      await options.pacer?.turn();
      try {
        await updateOne(trx, integrationId, item, before, now, counts);
      } catch (err) {
        // Raised by the products' checks before they write anything (a currency change the
        // price cannot follow, say): the item fails alone, the batch goes on.
        if (!(err instanceof AppError) || err.kind === 'internal') throw err;
        fail(counts, {
          external_id: item.externalId,
          field: err.field ?? 'product',
          reason: err.reason ?? err.message,
        });
      }
    }
    for (let at = 0; at < creates.length; at += CREATE_CHUNK) {
      await options.pacer?.turn();
      const chunk = creates.slice(at, at + CREATE_CHUNK);
      await createAll(trx, integrationId, chunk, options.defaultCurrency, now, counts);
    }
  });
}

/** A batch of items as a sync stages them (sync_staged_items without run and position). */
export interface StagedItem {
  externalId: string | null;
  /** The item to write, or null when nothing needs writing. */
  item: SourceItem | null;
}

/**
 * A batch of a sync's items, read but not written: counts what it can without writing
 * (fetched; failed for the items the platform could not give; unchanged for the items whose
 * fingerprint matches their mapping, read outside any transaction) and returns what to stage:
 * every external id the platform still lists, with the item when it needs writing. The
 * sync's last step writes the staged items with applyItems (`counted`).
 */
export async function stageItems(
  db: Executor,
  integrationId: string,
  items: SourceItem[],
  options: { defaultCurrency: string; counts: SyncCounts },
): Promise<StagedItem[]> {
  const { counts } = options;
  const staged: StagedItem[] = [];
  const products = screenBatch(items, counts, {
    count: true,
    kept: (externalId) => staged.push({ externalId, item: null }),
  });
  if (products.length === 0) return staged;
  const mappings = new Map(
    (await findMappings(db, integrationId, [...new Set(products.map((p) => p.externalId))])).map(
      (m) => [m.external_id, m],
    ),
  );
  for (const item of products) {
    const currency = item.product.currency ?? options.defaultCurrency;
    const mapping = mappings.get(item.externalId);
    if (
      mapping &&
      Number(mapping.present) === 1 &&
      mapping.fingerprint === fingerprintOf(item.product, currency)
    ) {
      counts.unchanged++;
      staged.push({ externalId: item.externalId, item: null });
    } else {
      staged.push({ externalId: item.externalId, item });
    }
  }
  return staged;
}

/**
 * New items (and mapped ones whose product was deleted through the API since: made again
 * under the same id), created together: the same rows and product.created events as one by
 * one, with multi-row inserts.
 */
async function createAll(
  trx: Executor,
  integrationId: string,
  items: Valid[],
  defaultCurrency: string,
  now: Date,
  counts: SyncCounts,
): Promise<void> {
  if (items.length === 0) return;
  const stamp = now.toISOString();
  await createProducts(
    trx,
    items.map((item) => ({ ...item.input, id: item.productId })),
    { currency: defaultCurrency },
    now,
  );
  counts.created += items.length;
  const fresh: IntegrationProductRow[] = [];
  for (const item of items) {
    const row = {
      integration_id: integrationId,
      external_id: item.externalId,
      group_id: item.groupId,
      product_id: item.productId,
      fingerprint: item.fingerprint,
      updated_at: stamp,
    };
    if (item.mapped) await updateMapping(trx, integrationId, item.externalId, row);
    else fresh.push(row);
  }
  await insertMappings(trx, fresh);
}

async function updateOne(
  trx: Executor,
  integrationId: string,
  item: Valid,
  before: ProductRow,
  now: Date,
  counts: SyncCounts,
): Promise<void> {
  const { input, productId } = item;
  const after = await changeProduct(
    trx,
    before,
    {
      name: input.name,
      description: input.description ?? null,
      price: input.price,
      currency: input.currency,
      status: input.status ?? 'active',
      category: input.category ?? null,
      images: input.images ?? [],
      attributes: input.attributes ?? {},
    },
    now,
  );
  if (sameProduct(presentProduct(before), after)) counts.unchanged++;
  else counts.updated++;
  await updateMapping(trx, integrationId, item.externalId, {
    product_id: productId,
    fingerprint: item.fingerprint,
    group_id: item.groupId,
    updated_at: now.toISOString(),
  });
}

function sameProduct(a: object, b: object): boolean {
  const strip = (p: object) => JSON.stringify({ ...p, updated_at: undefined });
  return strip(a) === strip(b);
}

/**
 * Makes the products of these mappings inactive (never deletes them) and forgets their
 * fingerprints, so an item that comes back is written again. Already inactive products are
 * left as they are (no event).
 */
export async function deactivateMappings(
  db: Executor,
  integrationId: string,
  mappings: { external_id: string; product_id: string }[],
  options: { now: Date; counts: SyncCounts; pacer?: Pacer },
): Promise<void> {
  if (mappings.length === 0) return;
  const stamp = options.now.toISOString();
  await withTransaction(db, async (trx) => {
    // The integration's mappings are decided on below: its apply lock first.
    await lockIntegrationApply(trx, integrationId);
    for (const m of mappings) {
      await options.pacer?.turn();
      const product = await findProductForUpdate(trx, m.product_id);
      if (product && product.status !== 'inactive') {
        await changeProduct(trx, product, { status: 'inactive' }, options.now);
        options.counts.deactivated++;
      }
      await updateMapping(trx, integrationId, m.external_id, {
        fingerprint: null,
        updated_at: stamp,
      });
    }
  });
}

/**
 * After a complete run, in its transaction: every live mapping that the run's staged items do
 * not list is gone from the platform. Read in pages by external id.
 */
export async function deactivateUnstaged(
  trx: Executor,
  integrationId: string,
  runId: string,
  options: {
    now: Date;
    counts: SyncCounts;
    batchSize: number;
    signal?: AbortSignal;
    pacer?: Pacer;
  },
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    const page = await pageUnstagedLiveMappings(
      trx,
      integrationId,
      runId,
      after,
      options.batchSize,
    );
    if (page.length === 0) return;
    after = page[page.length - 1]!.external_id;
    await deactivateMappings(trx, integrationId, page, options);
  }
}

/**
 * An inbound webhook's change in one transaction: its items written, the variants of their
 * groups that it no longer lists made inactive, and the deleted groups' products too.
 */
export async function applyWebhookChange(
  db: Executor,
  integrationId: string,
  change: { items: SourceItem[]; removedGroupIds: string[] },
  options: { defaultCurrency: string; now: Date; counts: SyncCounts },
): Promise<void> {
  await withTransaction(db, async (trx) => {
    // The integration's mappings are decided on below: its apply lock first.
    await lockIntegrationApply(trx, integrationId);
    const seen = new Set<string>();
    await applyItems(trx, integrationId, change.items, { ...options, seen });
    const groups = new Set<string>();
    for (const item of change.items) {
      const group = item.kind === 'product' ? item.product.attributes?.item_group_id : undefined;
      if (typeof group === 'string' && isAcceptableText(group)) groups.add(group);
    }
    const stale = (await findLiveMappingsOfGroups(trx, integrationId, [...groups])).filter(
      (m) => !seen.has(m.external_id),
    );
    const removedGroupIds = change.removedGroupIds.filter(isAcceptableText);
    const removed = await findLiveMappingsOfGroups(trx, integrationId, removedGroupIds);
    await deactivateMappings(trx, integrationId, [...stale, ...removed], options);
  });
}
