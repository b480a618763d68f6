import { loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { previewFeed } from '../domain/feeds/preview.js';
import type { FeedPreview } from '../domain/feeds/schemas.js';
import { AppError } from '../errors.js';
import { parseVerbArgs, UsageError } from './args.js';

export const feedsHelp = `Usage: agentshelf feeds preview ID [--json]

Feeds in the shapes agents' platforms ingest (profiles agentshelf, openai, google, acp, stripe;
see docs/feeds.md#channels). Create and change feeds with the API (POST /v1/feeds); these
commands work on the store directly.

  feeds preview ID [--json]
      What the feed's next generation would contain, through its profile's real mapping and
      validation, writing and sending nothing: products selected, included and excluded,
      each exclusion reason with its count and up to 20 product ids, the issues of the
      included products, and every issue by field and problem. The same answer as
      GET /v1/feeds/ID/preview. Exits 0, or 1 when the feed does not exist.`;

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

export async function runFeeds(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, {});
  const [sub, id] = positionals;
  if (values.help || !sub) {
    console.log(feedsHelp);
    return values.help ? 0 : 2;
  }
  if (sub !== 'preview') throw new UsageError(`unknown feeds command '${sub}'; use preview`);
  if (!id) throw new UsageError('feeds preview needs the feed id (feed_...)');
  const config = loadConfig();
  const store = openStore(config);
  try {
    await migrateToLatest(store.db);
    const preview = await previewFeed(store.db, () => store.openReader(), id, {
      storeName: config.STORE_NAME,
      storeUrl: config.FEEDS_URL,
      storeCountry: config.STORE_COUNTRY,
    });
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
