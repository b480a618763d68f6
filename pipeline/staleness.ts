import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/store.js';
import { feedFilePath } from '../src/domain/feeds/files.js';
import { VERSION } from '../src/version.js';

const PRODUCT_EVENTS = ['product.created', 'product.updated', 'product.deleted'] as const;

/**
 * What a run reads, in a few cheap queries: the last product event, the product totals
 * (synthetic seeds write no events) and the feed definitions. Two equal versions mean the
 * run would publish the same files.
 */
export async function readCatalogueVersion(db: Db): Promise<string> {
  const event = await db
    .selectFrom('events')
    .select('seq')
    .where('type', 'in', PRODUCT_EVENTS)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const counts = await db
    .selectFrom('product_counts')
    .select(['status', 'count'])
    .orderBy('status')
    .execute();
  const feeds = await db
    .selectFrom('feeds')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('changed')])
    .executeTakeFirst();
  return JSON.stringify({
    product_event: event?.seq ?? 0,
    products: counts.map((c) => `${c.status}:${c.count}`),
    feeds: Number(feeds?.n ?? 0),
    feeds_changed: feeds?.changed ?? null,
  });
}

/** The settings that shape published files, and the code version that wrote them. */
export function settingsHash(config: Config): string {
  const shaping = [
    VERSION,
    config.STORE_NAME,
    config.BASE_URL,
    config.FEEDS_URL,
    config.PUBLIC_DIR,
    config.DEFAULT_CURRENCY,
  ];
  return createHash('sha256').update(JSON.stringify(shaping)).digest('hex');
}

/**
 * Why the published output may be out of date, or undefined when it is current: a feed
 * waiting in processing, no successful run yet, products, feeds or settings changed since the
 * last successful run, or an active feed's file gone from disk.
 */
export async function findStaleReason(db: Db, config: Config): Promise<string | undefined> {
  const processing = await db
    .selectFrom('feeds')
    .select('id')
    .where('status', '=', 'processing')
    .limit(1)
    .executeTakeFirst();
  if (processing) return `feed ${processing.id} is processing`;
  const last = await db
    .selectFrom('pipeline_runs')
    .select(['catalogue_version', 'settings_hash'])
    .where('status', '=', 'succeeded')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last) return 'no pipeline run has succeeded yet';
  if (last.settings_hash !== settingsHash(config)) return 'settings changed since the last run';
  if (last.catalogue_version !== (await readCatalogueVersion(db)))
    return 'products or feeds changed since the last run';
  const published = await db
    .selectFrom('feeds')
    .select(['id', 'published_format'])
    .where('status', '=', 'active')
    .where('published_format', 'is not', null)
    .execute();
  for (const feed of published) {
    if (!fs.existsSync(feedFilePath(config.DATA_DIR, feed.id, feed.published_format!)))
      return `the file of feed ${feed.id} is missing`;
  }
  return undefined;
}
