/**
 * The channel profiles by name (CONTRACT part 10), and the rules a feed definition meets:
 * a format the profile's platform takes, gzip only where it takes it, country settings.
 */
import type { FeedFormat, FeedProfile, FeedRow } from '../../../db/schema.js';
import { AppError } from '../../../errors.js';
import { dropForbiddenCharacters as clean, FEED_COLUMNS, feedItemOf } from '../record.js';
import { acpProfile } from './acp.js';
import { googleProfile } from './google.js';
import { openaiProfile } from './openai.js';
import type { ChannelProfile, ChannelSettings, FlatProfile } from './profile.js';
import { stripeProfile } from './stripe.js';

/** `agentshelf`: today's columns (CONTRACT part 3); every product is published, issues reported. */
export const agentshelfProfile: FlatProfile = {
  name: 'agentshelf',
  kind: 'flat',
  formats: ['json', 'csv', 'xml'],
  gzip: false,
  excludes: false,
  columns: FEED_COLUMNS,
  map: (product, settings) => {
    const { record, issues } = feedItemOf(product, settings);
    return { id: product.id, record, issues };
  },
};

export const CHANNEL_PROFILES: Readonly<Record<FeedProfile, ChannelProfile>> = {
  agentshelf: agentshelfProfile,
  openai: openaiProfile,
  google: googleProfile,
  acp: acpProfile,
  stripe: stripeProfile,
};

export const FEED_PROFILES = Object.keys(CHANNEL_PROFILES) as FeedProfile[];

/** What a feed definition says about its channel, as stored. */
export interface ChannelDefinition {
  profile: FeedProfile;
  format: FeedFormat;
  compression: 'gzip' | null;
}

/**
 * Refuses a format or a compression the profile's platform does not take (422 naming
 * `format` or `compression`).
 */
export function checkChannelDefinition(d: ChannelDefinition): void {
  const profile = CHANNEL_PROFILES[d.profile];
  if (!profile.formats.includes(d.format)) {
    throw new AppError(
      'invalid_field',
      `The ${d.profile} profile does not take format '${d.format}'; it takes ${profile.formats.join(', ')}.`,
      { field: 'format', reason: `${d.profile} takes ${profile.formats.join(', ')}` },
    );
  }
  if (d.compression === 'gzip' && !profile.gzip) {
    throw new AppError('invalid_field', `The ${d.profile} profile does not take gzipped files.`, {
      field: 'compression',
      reason: `${d.profile} takes no compression`,
    });
  }
}

/** A feed's stored channel settings (JSON), as the API shows them. */
export interface FeedChannelSettings {
  target_countries?: string[];
  store_country?: string;
  seller_name?: string;
}

export function parseFeedSettings(text: string | null): FeedChannelSettings {
  if (text === null) return {};
  return JSON.parse(text) as FeedChannelSettings;
}

/** The settings of one feed's run: the feed's own, else the store's. */
export function channelSettings(
  feed: Pick<FeedRow, 'settings'>,
  store: { storeName: string; storeUrl: string; storeCountry: string },
): ChannelSettings {
  const s = parseFeedSettings(feed.settings);
  const storeCountry = s.store_country ?? store.storeCountry;
  return {
    storeName: clean(store.storeName),
    storeUrl: clean(store.storeUrl),
    sellerName: clean(s.seller_name ?? store.storeName),
    storeCountry,
    targetCountries: s.target_countries ?? [storeCountry],
  };
}
