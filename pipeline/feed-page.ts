import type { FeedSourceRow } from '../src/db/queries/feeds.js';
import type { FeedFormat } from '../src/db/schema.js';
import {
  feedIssueCode,
  toFeedItem,
  type FeedRecord,
  type FeedSettings,
} from '../src/domain/feeds/record.js';
import { FEED_FORMATTERS } from './feed-formats.js';

/** A page of products to turn into feed text. */
export interface PageRequest {
  format: FeedFormat;
  settings: FeedSettings;
  rows: FeedSourceRow[];
  /** The page that opens the feed's list of records. */
  first: boolean;
}

/**
 * Records formatted at once. Small runs of records keep the strings in cache: csv-stringify
 * took 4-5 µs a record on runs of 32-64 and 11-17 µs on runs of 1,000, XML and JSON 10-40%
 * more on long runs too.
 */
const RECORDS_PER_CHUNK = 64;

export interface PageResult {
  /** The page's records in the feed's format, in order, a few dozen records a piece. */
  chunks: string[];
  /** One diagnostics line (NDJSON) per product with issues. */
  issueLines: string;
  /** Products per issue code (`field.problem`). */
  issueCounts: Record<string, number>;
  withErrors: number;
  withWarnings: number;
}

/**
 * Turns a page of product rows into feed text and diagnostics: the CPU-heavy part of a feed,
 * kept apart from the reading and writing around it. (On a worker thread it freed the main
 * thread but cost more CPU in copies and 100 MB more memory, and ran no faster on a busy
 * two-core machine, so it runs inline.)
 */
export function formatFeedPage(request: PageRequest): PageResult {
  const records: FeedRecord[] = [];
  const issueCounts: Record<string, number> = {};
  let issueLines = '';
  let withErrors = 0;
  let withWarnings = 0;
  for (const row of request.rows) {
    const { record, issues } = toFeedItem(row, request.settings);
    records.push(record);
    if (issues.length === 0) continue;
    let errors = 0;
    for (const issue of issues) {
      const code = feedIssueCode(issue);
      issueCounts[code] = (issueCounts[code] ?? 0) + 1;
      if (issue.severity === 'error') errors++;
    }
    if (errors > 0) withErrors++;
    if (errors < issues.length) withWarnings++;
    issueLines += `${JSON.stringify({ id: record.id, issues })}\n`;
  }
  const formatter = FEED_FORMATTERS[request.format];
  const chunks: string[] = [];
  for (let i = 0; i < records.length; i += RECORDS_PER_CHUNK) {
    const first = request.first && i === 0;
    chunks.push(formatter.records(records.slice(i, i + RECORDS_PER_CHUNK), first));
  }
  return {
    chunks,
    issueLines,
    issueCounts,
    withErrors,
    withWarnings,
  };
}
