import path from 'node:path';
import type { FeedFormat } from '../db/schema.js';

/**
 * Where a feed's files live. The pipeline writes them and the export route reads them;
 * PUBLIC_DIR/feeds/ is outside the discovery tree (PUBLIC_DIR/v1/), so feeds are served only
 * through the authenticated export endpoint.
 */
export function feedsDirectory(publicDir: string): string {
  return path.join(publicDir, 'feeds');
}

/** PUBLIC_DIR/feeds/<feed_id>.<format>, with its `.gz` sibling beside it. */
export function feedFilePath(publicDir: string, feedId: string, format: FeedFormat): string {
  return path.join(feedsDirectory(publicDir), `${feedId}.${format}`);
}

/** PUBLIC_DIR/feeds/<feed_id>.diagnostics.ndjson: one line per product with issues. */
export function feedDiagnosticsPath(publicDir: string, feedId: string): string {
  return path.join(feedsDirectory(publicDir), `${feedId}.diagnostics.ndjson`);
}

export const FEED_CONTENT_TYPES: Record<FeedFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  xml: 'application/xml; charset=utf-8',
};
