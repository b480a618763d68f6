import fs from 'node:fs';
import type { FeedRow } from '../src/db/schema.js';
import {
  countFeedProducts,
  listFeedPublications,
  listFeedsToGenerate,
} from '../src/db/queries/feeds.js';
import { CHANNEL_PROFILES, channelSettings } from '../src/domain/feeds/channels/index.js';
import { ChannelMapper, readFeedPages } from '../src/domain/feeds/channels/mapping.js';
import { IssueTally } from '../src/domain/feeds/channels/tally.js';
import { planDelivery } from '../src/domain/feeds/deliveries.js';
import { storeChannelSettingsOf } from '../src/domain/feeds/preview.js';
import { FEED_CONTENT_TYPES, feedFilePath, feedsDirectory } from '../src/domain/feeds/files.js';
import {
  recordFeedFailed,
  recordFeedPublished,
  recordFeedUnpublished,
  type FeedPublication,
} from '../src/domain/feeds/feeds.js';
import { formatRecords } from './feed-page.js';
import { formatterFor } from './feed-formats.js';
import { FsPublisher, removeStaleTemporaries } from '../src/publish/fs.js';
import type { OpenFile, Publisher } from '../src/publish/publisher.js';
import { yieldToEventLoop } from '../src/runtime/pace.js';
import { messageOf, type PipelineContext, type Stage, type StageOutput } from './stage.js';

/**
 * gzip level of the `.gz` siblings. Levels 1-3 use zlib's fast strategy: on feed text level 3
 * ran 3x faster than the default 6 for files 8-20% larger, and the .gz is rebuilt on every
 * run while the pipeline's own thread works beside it.
 */
const GZIP_LEVEL = 3;
const FEED_FILE = /^(feed_[A-Za-z0-9]+)\.(json|jsonl|csv|tsv|xml|diagnostics\.ndjson)(\.gz)?$/;

async function write(file: OpenFile, text: string): Promise<void> {
  if (text === '') return;
  const wait = file.write(text);
  if (wait) await wait;
}

/**
 * Streams one feed's products from the read-only connection through its profile (mapping,
 * validation, exclusion) into its format and its diagnostics file, both published
 * atomically. One page of rows and its text are in memory; a page blocks the event loop for
 * a few milliseconds.
 */
async function generateFeed(
  ctx: PipelineContext,
  publisher: Publisher,
  feed: FeedRow,
  onProgress: (done: number) => void,
): Promise<FeedPublication & { bytes: number }> {
  const started = performance.now();
  const store = storeChannelSettingsOf(ctx.config);
  const profile = CHANNEL_PROFILES[feed.profile];
  const formatter = formatterFor(profile, feed.format);
  const meta = {
    id: feed.id,
    name: feed.name,
    storeName: store.storeName,
    storeUrl: store.storeUrl,
  };
  const settings = channelSettings(feed, store);
  const previous = feed.published_format === feed.format ? feed.sha256 : null;
  const file = publisher.open(`${feed.id}.${feed.format}`, {
    contentType: FEED_CONTENT_TYPES[feed.format],
    gzipLevel: GZIP_LEVEL,
    // Hashed, written and gzipped beside the thread that maps and formats: at 100,000 products
    // an ACP feed and a stripe CSV each took 0.90x the time (docs/feeds.md).
    offThread: true,
    ...(previous ? { previousSha256: previous } : {}),
  });
  const diagnostics = publisher.open(`${feed.id}.diagnostics.ndjson`, {
    contentType: 'application/x-ndjson; charset=utf-8',
    gzipLevel: GZIP_LEVEL,
  });
  try {
    await write(file, formatter.begin(meta));
    const tally = new IssueTally(profile.excludes);
    const mapper = new ChannelMapper(profile, settings, tally);
    let records = 0;
    const put = async (batch: object[]) => {
      // A write per few dozen records, not one joined page: the file gathers them into 1 MB
      // writes itself (gzip costs the main thread 5x more in 30 KB writes), and a piece stays
      // a small string where a page's text (300 KB and more) is a large object that only a full
      // collection frees, on the file's thread most of all, which allocates little else.
      for (const text of formatRecords(formatter, batch, records === 0)) await write(file, text);
      records += batch.length;
    };
    await readFeedPages(
      ctx.reader,
      feed,
      profile,
      async (rows) => {
        await put(mapper.map(rows));
        await write(diagnostics, mapper.takeLines());
        onProgress(tally.products);
        // A page's awaits settle as microtasks, so without this turn the event loop would only
        // run when a buffer is full: the file and gzip streams start their next writes from it,
        // and would wait for it instead of running beside the next page.
        await yieldToEventLoop();
      },
      ctx.signal,
    );
    await put(mapper.finish());
    await write(file, formatter.end(meta));
    const published = await file.commit();
    await diagnostics.commit();
    return {
      revision: feed.revision,
      format: feed.format,
      sha256: published.sha256,
      changed: published.changed,
      productCount: tally.included,
      bytes: published.bytes,
      ms: performance.now() - started,
      diagnostics: tally.summary(ctx.now().toISOString()),
    };
  } catch (err) {
    await file.abort();
    await diagnostics.abort();
    throw err;
  }
}

/**
 * Records the delivery of a generation (a feed with a push delivery): skipped, held or
 * pending, for the delivery worker. A failure here is logged: the feed itself is published.
 */
async function planFeedDelivery(
  ctx: PipelineContext,
  feed: FeedRow,
  result: FeedPublication,
): Promise<void> {
  if (feed.delivery === null) return;
  const file = feedFilePath(ctx.config.DATA_DIR, feed.id, feed.format);
  try {
    await planDelivery(
      ctx.db,
      feed,
      {
        path: feed.compression === 'gzip' ? `${file}.gz` : file,
        sha256: result.sha256,
        products: result.productCount,
      },
      ctx.config.DATA_DIR,
      ctx.now(),
    );
  } catch (err) {
    ctx.logger.error({ err, feed_id: feed.id }, 'feed delivery could not be recorded');
  }
}

/**
 * Removes files no feed publishes any more: deleted feeds, inactive feeds, and the old
 * format of a feed whose format changed. Inactive feeds are then recorded as unpublished.
 */
async function removeUnpublishedFiles(ctx: PipelineContext, publisher: Publisher): Promise<void> {
  const feeds = new Map((await listFeedPublications(ctx.db)).map((f) => [f.id, f]));
  const unpublished = new Set<string>();
  for (const name of await publisher.list('')) {
    const match = FEED_FILE.exec(name);
    if (!match) continue;
    const [, id, kind] = match as unknown as [string, string, string];
    const feed = feeds.get(id);
    const keep =
      feed !== undefined &&
      feed.status !== 'inactive' &&
      (kind === 'diagnostics.ndjson' || kind === feed.published_format);
    if (keep) continue;
    await publisher.remove(name);
    if (feed?.status === 'inactive' && feed.published_format !== null) unpublished.add(id);
  }
  for (const id of unpublished) await recordFeedUnpublished(ctx.db, id);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/**
 * The feeds stage: every active or processing feed, one after another (one open file at a
 * time keeps memory flat), then the removal of files nothing publishes.
 */
export const feedsStage: Stage = async (ctx) => {
  let publisher = ctx.output?.feeds;
  if (!publisher) {
    const dir = feedsDirectory(ctx.config.DATA_DIR);
    await fs.promises.mkdir(dir, { recursive: true });
    await removeStaleTemporaries(dir);
    publisher = new FsPublisher(dir);
  }
  const feeds = await listFeedsToGenerate(ctx.db);
  const sizes: number[] = [];
  for (const feed of feeds) sizes.push(await countFeedProducts(ctx.db, feed));
  const total = sizes.reduce((a, b) => a + b, 0);
  const summary: string[] = [];
  const failures: string[] = [];
  const outputs: StageOutput[] = [];
  let done = 0;
  ctx.progress?.({ stage: 'feeds', done, total });
  for (const feed of feeds) {
    ctx.signal?.throwIfAborted();
    // Today's feeds keep today's line; a channel profile is named before its format.
    const profile = feed.profile === 'agentshelf' ? '' : `${feed.profile} `;
    const label = `${feed.id} ${profile}${feed.format} "${feed.name}"`;
    const started = performance.now();
    try {
      const result = await generateFeed(ctx, publisher, feed, (n) =>
        ctx.progress?.({ stage: 'feeds', done: done + n, total }),
      );
      done += result.diagnostics.products;
      await recordFeedPublished(ctx.db, feed.id, result, ctx.config.BASE_URL, ctx.now());
      if (!ctx.output?.feeds) await planFeedDelivery(ctx, feed, result);
      const d = result.diagnostics;
      summary.push(
        `${label}: ${result.productCount} products${d.excluded > 0 ? ` (${d.excluded} excluded)` : ''}, ${d.products_with_errors} with errors, ${d.products_with_warnings} with warnings, ${result.changed ? 'published' : 'unchanged'} in ${seconds(result.ms)}`,
      );
      outputs.push({
        name: feed.id,
        ok: true,
        products: result.productCount,
        ms: result.ms,
        bytes: result.bytes,
        changed: result.changed,
      });
    } catch (err) {
      if (ctx.signal?.aborted) throw err;
      const message = messageOf(err);
      ctx.logger.error({ err, feed_id: feed.id }, 'feed generation failed');
      await recordFeedFailed(
        ctx.db,
        feed.id,
        feed.revision,
        message,
        ctx.config.BASE_URL,
        ctx.now(),
      );
      summary.push(`${label}: FAILED: ${message}`);
      failures.push(`${feed.id} ("${feed.name}")`);
      outputs.push({
        name: feed.id,
        ok: false,
        products: 0,
        ms: performance.now() - started,
        bytes: 0,
        changed: false,
        error: message,
      });
    }
  }
  await removeUnpublishedFiles(ctx, publisher);
  await publisher.commit();
  if (feeds.length === 0) summary.push('no active or processing feed');
  return { stage: 'feeds', summary, failures, outputs };
};
