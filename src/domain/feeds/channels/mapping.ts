/**
 * Reading a feed's products and mapping them through its profile: the one path both a
 * generation (pipeline/feeds-stage.ts, which also formats and writes) and the preview (which
 * only counts) take, so the preview tells what the next generation will publish.
 */
import {
  feedProductPages,
  streamFeedProductsByGroup,
  type FeedGroupRow,
  type FeedSelection,
  type FeedSourceRow,
} from '../../../db/queries/feeds.js';
import type { Db } from '../../../db/store.js';
import type { Executor } from '../../../db/transaction.js';
import { readCatalogueProduct } from '../../catalogue/product.js';
import { cleanerFor, toFeedItem } from '../record.js';
import type { ChannelIssue, ChannelProfile, ChannelSettings } from './profile.js';
import type { IssueTally } from './tally.js';

/**
 * Products read at once: one query per page, a page in memory. A page lives while it is
 * mapped and written, so it is what V8's young-generation collections copy: pages of 1,000
 * rows (about 5 MB with their products, records and text) made them copy 200-300 ms a
 * 100,000-product feed, pages of 250 a quarter of that for 4% more queries.
 */
export const FEED_PAGE = 250;

/**
 * Calls `onPage` with the feed's products a page at a time: in creation order for a flat
 * profile (keyset pages in one read transaction: a consistent snapshot), in variant-group
 * order for a grouped one (one streamed query on the reader).
 */
export async function readFeedPages(
  reader: Db,
  feed: FeedSelection,
  profile: ChannelProfile,
  onPage: (rows: FeedSourceRow[]) => Promise<void> | void,
  signal?: AbortSignal,
): Promise<void> {
  if (profile.kind === 'grouped') {
    // The driver's chunks: FEED_PAGE rows each on both stores (the last may hold fewer).
    for await (const page of streamFeedProductsByGroup(reader, feed, FEED_PAGE)) {
      signal?.throwIfAborted();
      await onPage(page);
    }
    return;
  }
  await reader.transaction().execute(async (trx: Executor) => {
    const pageAfter = feedProductPages(trx, feed, FEED_PAGE);
    // The next page is asked for as soon as a page arrives, before it is mapped: on
    // PostgreSQL the database finds the next page while this process maps the last one (one
    // page ahead on the transaction's connection); on SQLite the read is the same work.
    let next = pageAfter(undefined);
    for (;;) {
      signal?.throwIfAborted();
      const rows = await next;
      const more = rows.length === FEED_PAGE;
      if (more) {
        next = pageAfter(rows[rows.length - 1]);
        // A page asked for and left unread when onPage throws must not fail the process.
        next.catch(() => undefined);
      }
      if (rows.length > 0) await onPage(rows);
      if (!more) break;
    }
  });
}

/**
 * The diagnostics line of a product: `{"id", "excluded"?, "issues"}` as JSON.stringify writes
 * it. Issues are shared objects (one per profile, field and problem), so the JSON of a list
 * of them is made once per run and list, not once per product.
 */
const MAX_LISTS = 10_000;

class IssueLines {
  private readonly ids = new WeakMap<ChannelIssue, number>();
  private next = 0;
  /** At most MAX_LISTS lists kept (a profile has a few dozen issues; combinations are few). */
  private readonly json = new Map<string, string>();

  line(id: string, issues: readonly ChannelIssue[], excluded: boolean): string {
    let key = '';
    for (const i of issues) {
      let n = this.ids.get(i);
      if (n === undefined) this.ids.set(i, (n = this.next++));
      key += `${n},`;
    }
    let json = this.json.get(key);
    if (json === undefined) {
      json = JSON.stringify(issues);
      if (this.json.size < MAX_LISTS) this.json.set(key, json);
    }
    return `{"id":${JSON.stringify(id)},${excluded ? '"excluded":true,' : ''}"issues":${json}}\n`;
  }
}

/**
 * Maps pages of product rows to the profile's records, counting every product's issues in
 * the tally and leaving out what the profile excludes. A grouped profile's record is given
 * out when its last variant has been read (the next group starts, or `finish()`); a group
 * whose every variant was excluded gives none.
 */
export class ChannelMapper {
  /** The diagnostics lines (NDJSON) of the products mapped since the last take. */
  private lines = '';
  private groupKey: string | undefined;
  private variants: unknown[] = [];
  private readonly issueLines = new IssueLines();

  constructor(
    private readonly profile: ChannelProfile,
    private readonly settings: ChannelSettings,
    private readonly tally: IssueTally,
    private readonly keepLines = true,
  ) {}

  /** The records the rows complete, in order. */
  map(rows: readonly FeedSourceRow[]): object[] {
    const p = this.profile;
    const records: object[] = [];
    if (p.kind === 'grouped') {
      for (const row of rows as readonly FeedGroupRow[]) {
        const key = String(row.group_key);
        if (key !== this.groupKey) this.closeGroup(records, key);
        const { id, variant, issues } = p.mapVariant(
          readCatalogueProduct(row, this.settings),
          this.settings,
        );
        if (this.count(id, issues)) this.variants.push(variant);
      }
      return records;
    }
    const tuned = p.name === 'agentshelf';
    for (const row of rows) {
      // agentshelf keeps its tuned path (it skips the cleaning of rows that need none).
      const item = tuned
        ? toFeedItem(row, this.settings)
        : p.map(readCatalogueProduct(row, this.settings), this.settings, cleanerFor(row));
      if (this.count(row.id, item.issues)) records.push(item.record);
    }
    return records;
  }

  /** The last group's record, if it has a variant. */
  finish(): object[] {
    const records: object[] = [];
    this.closeGroup(records, undefined);
    return records;
  }

  /** The diagnostics lines since the last call. */
  takeLines(): string {
    const lines = this.lines;
    this.lines = '';
    return lines;
  }

  private count(id: string, issues: readonly ChannelIssue[]): boolean {
    const written = this.tally.add(id, issues);
    if (this.keepLines && issues.length > 0)
      this.lines += this.issueLines.line(id, issues, !written);
    return written;
  }

  private closeGroup(records: object[], next: string | undefined): void {
    const p = this.profile;
    if (p.kind === 'grouped' && this.groupKey !== undefined && this.variants.length > 0) {
      records.push(p.group(this.groupKey, this.variants) as object);
    }
    this.groupKey = next;
    this.variants = [];
  }
}
