import type { FeedFormatter } from './feed-formats.js';

/**
 * Records formatted at once. Small runs of records keep the strings in cache: csv-stringify
 * took 4-5 µs a record on runs of 32-64 and 11-17 µs on runs of 1,000, XML and JSON 10-40%
 * more on long runs too.
 */
const RECORDS_PER_CHUNK = 64;

/**
 * Turns a page of records into feed text, a few dozen records a piece: the CPU-heavy part of
 * a feed with the mapping (domain/feeds/channels/mapping.ts), kept apart from the reading and
 * writing around it. (On a worker thread it freed the main thread but cost more CPU in copies
 * and 100 MB more memory, and ran no faster on a busy two-core machine, so it runs inline.)
 * `first` is true when no record of the feed has been written yet.
 */
export function formatRecords(
  formatter: FeedFormatter,
  records: readonly object[],
  first: boolean,
): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < records.length; i += RECORDS_PER_CHUNK) {
    chunks.push(formatter.records(records.slice(i, i + RECORDS_PER_CHUNK), first && i === 0));
  }
  return chunks;
}
