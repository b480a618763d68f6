import path from 'node:path';
import type { FeedFormat } from '../../db/schema.js';

/**
 * Where a feed's files live: DATA_DIR/feeds/. The pipeline writes them and the export route
 * reads them. They stay out of PUBLIC_DIR, which a CDN may serve whole: a merchant's feeds
 * are reached only through the authenticated export endpoint.
 */
export function feedsDirectory(dataDir: string): string {
  return path.join(dataDir, 'feeds');
}

/** DATA_DIR/feeds/<feed_id>.<format>, with its `.gz` sibling beside it. */
export function feedFilePath(dataDir: string, feedId: string, format: FeedFormat): string {
  return path.join(feedsDirectory(dataDir), `${feedId}.${format}`);
}

/** DATA_DIR/feeds/<feed_id>.diagnostics.ndjson: one line per product with issues. */
export function feedDiagnosticsPath(dataDir: string, feedId: string): string {
  return path.join(feedsDirectory(dataDir), `${feedId}.diagnostics.ndjson`);
}

export const FEED_CONTENT_TYPES: Record<FeedFormat, string> = {
  json: 'application/json; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  tsv: 'text/tab-separated-values; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};
