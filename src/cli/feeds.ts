import { loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { previewFeed, storeChannelSettingsOf } from '../domain/feeds/preview.js';
import { DeliveryRunner, planDelivery, presentDelivery } from '../domain/feeds/deliveries.js';
import { feedFilePath } from '../domain/feeds/files.js';
import { SecretBox } from '../domain/integrations/secret-box.js';
import { findFeedById } from '../db/queries/feeds.js';
import { findDeliveringDelivery } from '../db/queries/feed-deliveries.js';
import type { FeedDeliveryRow, FeedRow } from '../db/schema.js';
import type { FeedDeliveryRecord } from '../domain/feeds/delivery-schemas.js';
import { deliveryRemoteReaders, deliveryTransports } from '../platforms/index.js';
import { createLogger } from '../logger.js';
import type { Config } from '../config.js';
import type { Store } from '../db/store.js';
import { createProgress } from './progress.js';
import type { FeedPreview } from '../domain/feeds/schemas.js';
import { AppError, notFound } from '../errors.js';
import { parseVerbArgs, UsageError } from './args.js';

export const feedsHelp = `Usage: agentshelf feeds <preview|deliver> ID [options]

Feeds in the shapes agents' platforms ingest (profiles agentshelf, openai, google, acp, stripe;
see docs/feeds.md#channels). Create and change feeds with the API (POST /v1/feeds); these
commands work on the store directly.

  feeds preview ID [--json]
      What the feed's next generation would contain, through its profile's real mapping and
      validation, writing and sending nothing: products selected, included and excluded,
      each exclusion reason with its count and up to 20 product ids, the issues of the
      included products, and every issue by field and problem. The same answer as
      GET /v1/feeds/ID/preview. Exits 0, or 1 when the feed does not exist.
  feeds deliver ID [--force] [--json]
      Sends the feed's published file to its delivery (sftp) now and waits (a progress line
      on a terminal), recording a delivery as a generation does: content identical to the
      last delivered is skipped, a product count more than max_drop below it is held;
      --force sends regardless. A delivery another process is sending is left to it (exit
      1) while its lease holds (FEED_DELIVERY_LEASE_MS, renewed while it sends); one whose
      process died mid-send is retaken and finished here once the lease has lapsed.
      Exits 0 when delivered or skipped, 4 when held, 1 when it failed (the delivery worker
      of serve retries it), is being sent elsewhere, or the feed has no push delivery.`;

function printPreview(p: FeedPreview): void {
  console.log(
    `${p.feed_id} (${p.profile}, ${p.format}): ${p.products} products, ${p.included} included, ${p.excluded} excluded, ${p.records} records`,
  );
  const list = (title: string, reasons: FeedPreview['excluded_by_reason']) => {
    if (reasons.length === 0) return;
    console.log(`${title}:`);
    for (const r of reasons) {
      const more = r.count > r.product_ids.length ? ', ...' : '';
      console.log(`  ${r.code}\t${r.count}\t${r.message}\t${r.product_ids.join(', ')}${more}`);
    }
  };
  list('excluded', p.excluded_by_reason);
  list('published with', p.warnings);
}

function deliveryRunner(store: Store, config: Config): DeliveryRunner {
  return new DeliveryRunner({
    db: store.db,
    box: new SecretBox(config),
    transports: deliveryTransports,
    remoteReaders: deliveryRemoteReaders,
    logger: createLogger(config.LOG_LEVEL, { toStderr: true }),
    now: () => new Date(),
    dataDir: config.DATA_DIR,
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    retrySchedule: config.FEED_DELIVERY_RETRY_SCHEDULE,
    leaseMs: config.FEED_DELIVERY_LEASE_MS,
    waitMs: config.FEED_DELIVERY_WAIT_SECONDS * 1000,
  });
}

/**
 * A delivery of the feed another runner is sending: refused while its lease holds; retaken
 * and sent here when the lease lapsed (its process died mid-send). Answers the retaken
 * delivery's record when it carried the published content (nothing more to plan).
 */
async function resumeDelivering(
  store: Store,
  runner: DeliveryRunner,
  feed: FeedRow,
  sendWith: (row: FeedDeliveryRow) => Promise<FeedDeliveryRecord | undefined>,
): Promise<FeedDeliveryRecord | undefined> {
  const busy = await findDeliveringDelivery(store.db, feed.id);
  if (!busy) return undefined;
  const until = busy.claimed_until;
  if (until !== null && until > runner.lease().now) {
    throw new AppError(
      'conflict',
      `Delivery '${busy.id}' of feed '${feed.id}' is being sent by another process (its lease runs to ${until}); try again later.`,
    );
  }
  const record = await sendWith(busy);
  if (!record) {
    throw new AppError('conflict', `Delivery '${busy.id}' was retaken by another process.`);
  }
  return busy.sha256 === feed.sha256 ? record : undefined;
}

/**
 * `feeds deliver`: plans a delivery of the published file, then sends it here (after
 * finishing one a dead process left mid-send).
 */
async function deliverNow(
  store: Store,
  config: Config,
  id: string,
  flags: { force?: boolean | undefined; json?: boolean | undefined },
): Promise<number> {
  const feed = await findFeedById(store.db, id);
  if (!feed) throw notFound('feed', id);
  if (feed.delivery === null)
    throw new AppError('conflict', `Feed '${id}' is hosted: nothing to push.`);
  if (feed.published_format === null || feed.sha256 === null) {
    throw new AppError(
      'conflict',
      `Feed '${id}' has not been generated yet: run agentshelf build first.`,
    );
  }
  const runner = deliveryRunner(store, config);
  const progress =
    process.stderr.isTTY && !flags.json ? createProgress(process.stderr, 'bytes') : undefined;
  const sendWith = async (row: FeedDeliveryRow, claimed = false) => {
    const onProgress = (sent: number, total: number) =>
      progress?.update({ stage: 'deliver', done: sent, total });
    const sent = await runner.deliver(row, { claimed, onProgress });
    progress?.clear();
    return sent;
  };
  let record = await resumeDelivering(store, runner, feed, sendWith);
  if (!record) {
    const file = feedFilePath(config.DATA_DIR, feed.id, feed.published_format);
    const row = await planDelivery(
      store.db,
      feed,
      {
        path: feed.compression === 'gzip' ? `${file}.gz` : file,
        sha256: feed.sha256,
        products: feed.product_count,
      },
      config.DATA_DIR,
      new Date(),
      { claim: runner.lease(), ...(flags.force ? { force: true } : {}) },
    );
    record = presentDelivery(row!);
    if (row!.status === 'delivering') record = (await sendWith(row!, true)) ?? record;
  }
  if (flags.json) console.log(JSON.stringify(record));
  else {
    console.log(
      `${record.id} ${record.status}: ${record.products} products, ${record.bytes} bytes${record.reason ? ` (${record.reason})` : ''}`,
    );
    if (record.error) console.log(`  error: ${record.error}`);
  }
  return record.status === 'held' ? 4 : record.status === 'failed' ? 1 : 0;
}

export async function runFeeds(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, { force: { type: 'boolean' } });
  const [sub, id] = positionals;
  if (values.help || !sub) {
    console.log(feedsHelp);
    return values.help ? 0 : 2;
  }
  if (sub !== 'preview' && sub !== 'deliver') {
    throw new UsageError(`unknown feeds command '${sub}'; use preview or deliver`);
  }
  if (!id) throw new UsageError(`feeds ${sub} needs the feed id (feed_...)`);
  const config = loadConfig();
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    if (sub === 'deliver') return await deliverNow(store, config, id, values);
    const preview = await previewFeed(
      store.db,
      () => store.openReader(),
      id,
      storeChannelSettingsOf(config),
    );
    if (values.json) console.log(JSON.stringify(preview));
    else printPreview(preview);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}
