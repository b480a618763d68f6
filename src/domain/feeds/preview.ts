import { findFeedById } from '../../db/queries/feeds.js';
import type { Db } from '../../db/store.js';
import { notFound } from '../../errors.js';
import { CHANNEL_PROFILES, channelSettings } from './channels/index.js';
import { ChannelMapper, readFeedPages } from './channels/mapping.js';
import { IssueTally } from './channels/tally.js';
import type { FeedPreview } from './schemas.js';

/** The store settings a feed's channel falls back on. */
export interface StoreChannelSettings {
  storeName: string;
  storeUrl: string;
  storeCountry: string;
}

/** The store settings a channel falls back on, from the configuration (API, CLI, dashboard). */
export function storeChannelSettingsOf(config: {
  STORE_NAME: string;
  FEEDS_URL: string;
  STORE_COUNTRY: string;
}): StoreChannelSettings {
  return {
    storeName: config.STORE_NAME,
    storeUrl: config.FEEDS_URL,
    storeCountry: config.STORE_COUNTRY,
  };
}

/**
 * What the next generation of a feed would contain (CONTRACT part 10), computed by the same
 * reading, mapping and validation as a generation, without writing or sending anything:
 * products selected, included, excluded by reason (up to 20 ids each), the issues of the
 * included ones, and every issue by field and problem. Reads on a second connection when
 * one is given (a grouped profile streams the whole selection in one query).
 */
export async function previewFeed(
  db: Db,
  openReader: (() => Db) | undefined,
  id: string,
  store: StoreChannelSettings,
): Promise<FeedPreview> {
  const feed = await findFeedById(db, id);
  if (!feed) throw notFound('feed', id);
  const profile = CHANNEL_PROFILES[feed.profile];
  const tally = new IssueTally(profile.excludes, true);
  const mapper = new ChannelMapper(profile, channelSettings(feed, store), tally, false);
  let records = 0;
  const reader = openReader?.() ?? db;
  try {
    await readFeedPages(reader, feed, profile, (rows) => {
      records += mapper.map(rows).length;
    });
    records += mapper.finish().length;
  } finally {
    if (reader !== db) await reader.destroy();
  }
  return {
    feed_id: feed.id,
    profile: feed.profile,
    format: feed.format,
    records,
    ...tally.preview(),
  };
}
