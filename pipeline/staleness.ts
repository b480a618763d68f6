import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Config } from '../src/config.js';
import { selectCatalogueVersionParts } from '../src/db/queries/catalogue-version.js';
import { selectProcessingFeedId, selectPublishedFeeds } from '../src/db/queries/feeds.js';
import { selectLastSucceededPipelineRun } from '../src/db/queries/pipeline-runs.js';
import type { Db } from '../src/db/store.js';
import { feedFilePath } from '../src/domain/feeds/files.js';
import { VERSION } from '../src/version.js';

/**
 * What a run reads, in a few cheap queries: the last product event, the product totals
 * (synthetic seeds write no events) and the feed definitions. Two equal versions mean the
 * run would publish the same files.
 */
export async function readCatalogueVersion(db: Db): Promise<string> {
  const v = await selectCatalogueVersionParts(db);
  return JSON.stringify({
    product_event: v.productEvent,
    products: v.counts.map((c) => `${c.status}:${c.count}`),
    feeds: v.feeds,
    feeds_changed: v.feedsChanged,
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
  const processing = await selectProcessingFeedId(db);
  if (processing) return `feed ${processing} is processing`;
  const last = await selectLastSucceededPipelineRun(db);
  if (!last) return 'no pipeline run has succeeded yet';
  if (last.settings_hash !== settingsHash(config)) return 'settings changed since the last run';
  if (last.catalogue_version !== (await readCatalogueVersion(db)))
    return 'products or feeds changed since the last run';
  for (const feed of await selectPublishedFeeds(db)) {
    if (!fs.existsSync(feedFilePath(config.DATA_DIR, feed.id, feed.published_format)))
      return `the file of feed ${feed.id} is missing`;
  }
  return undefined;
}
