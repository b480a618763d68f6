import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/store.js';
import type { DiscoveryBrandRow } from '../../src/db/schema.js';
import {
  insertDiscoveryBrands,
  listDiscoveryBrands,
  recordBrandPublication,
  tallyActiveBrands,
} from '../../src/db/queries/discovery.js';
import { brandOrStore } from '../../src/domain/catalogue/product.js';
import { ACP_VERSION } from '../../src/domain/discovery/acp.js';
import { PUBLISHED_MARKER, brandFiles, brandUrls } from '../../src/domain/discovery/layout.js';
import { rateWindows } from '../../src/domain/discovery/policy.js';
import { assignSlugs } from '../../src/domain/discovery/slug.js';
import { FsPublisher, removeStaleTemporaries } from '../../src/publish/fs.js';
import type { Publisher } from '../../src/publish/publisher.js';
import type { PipelineContext, Stage, StageResult } from '../stage.js';
import { BrandBuild, SMALL_FILE, type BrandPlan } from './brand.js';
import { publishAgentFiles } from './agent-files.js';
import {
  renderCloudflareRules,
  renderCloudFrontFunction,
  renderHeadersFile,
  renderNginxConfig,
  renderRedirectsFile,
} from './cdn-config.js';
import { PAGE_PRODUCT_LIMIT, renderHomePage } from './html.js';

/** Bump when the published files' shape changes: every brand is then rebuilt once. */
const RENDERER_VERSION = 1;
/** Brands whose files may still be flushing while the next brand streams in. */
const COMMITS_IN_FLIGHT = 4;

/** Where the nginx config is written: beside the store, not in the public tree. */
export function nginxConfigPath(config: Pick<Config, 'DATA_DIR'>): string {
  return path.join(config.DATA_DIR, 'nginx', 'discovery.conf');
}

/**
 * The discovery stage: publishes the ACP brand registry under PUBLIC_DIR/v1/ (CONTRACT part 4).
 * Only brands whose products changed since their last publication are rebuilt; the index is
 * written after every brand it names, and a brand gone from the store loses its files only
 * after the index stops naming it.
 */
export const publishDiscovery: Stage = async (ctx) => {
  const started = performance.now();
  // A run killed mid-brand left its temporaries; we hold the lock, so every one is stale. Only
  // after such a run (or when asked): walking the whole tree would cost a small republish.
  if (ctx.sweepTemporaries) {
    await removeStaleTemporaries(ctx.config.PUBLIC_DIR);
    await removeStaleTemporaries(path.dirname(nginxConfigPath(ctx.config)));
  }
  // One read snapshot for the whole run: the index counts what the feeds hold.
  return ctx.reader.transaction().execute(async (snapshot) => publish(ctx, snapshot, started));
};

interface CurrentBrand {
  name: string;
  productCount: number;
  updatedAt: string;
  includeUnbranded: boolean;
}

async function publish(ctx: PipelineContext, reader: Db, started: number): Promise<StageResult> {
  const { config } = ctx;
  const root = config.PUBLIC_DIR;
  const publisher = ctx.output?.discovery ?? new FsPublisher(root);
  const storeName = config.STORE_NAME;
  const buildKey = createHash('sha256')
    .update(
      JSON.stringify([
        RENDERER_VERSION,
        ACP_VERSION,
        config.FEEDS_URL,
        storeName,
        PAGE_PRODUCT_LIMIT,
      ]),
    )
    .digest('hex')
    .slice(0, 16);

  // Products without a brand belong to the store's brand, with those that name it.
  const current = new Map<string, CurrentBrand>();
  for (const t of await tallyActiveBrands(reader)) {
    const name = brandOrStore(t.brand, storeName);
    const seen = current.get(name);
    if (!seen) {
      current.set(name, {
        name,
        productCount: t.product_count,
        updatedAt: t.updated_at,
        includeUnbranded: name === storeName,
      });
    } else {
      seen.productCount += t.product_count;
      if (t.updated_at > seen.updatedAt) seen.updatedAt = t.updated_at;
    }
  }

  // Slugs are decided, and stored, before any file is written.
  const known = new Map((await listDiscoveryBrands(ctx.db)).map((r) => [r.name, r]));
  const fresh = [...current.keys()].filter((n) => !known.has(n));
  if (fresh.length) {
    const assigned = assignSlugs(
      fresh,
      [...known.values()].map((r) => r.slug),
    );
    const stamp = ctx.now().toISOString();
    const rows = [...assigned].map(([name, slug]) => ({ name, slug, created_at: stamp }));
    await insertDiscoveryBrands(ctx.db, rows);
    for (const r of rows) {
      known.set(r.name, {
        ...r,
        product_count: 0,
        updated_at: null,
        build_key: null,
        published_at: null,
      });
    }
  }

  const plans: BrandPlan[] = [];
  for (const b of current.values()) {
    const state = known.get(b.name)!;
    if (!(await isUpToDate(publisher, state, b, buildKey))) {
      plans.push({ ...b, slug: state.slug });
    }
  }
  plans.sort((a, b) => (a.slug < b.slug ? -1 : 1));

  const changedFiles: string[] = [];
  const failures: string[] = [];
  const total = [...current.values()].reduce((n, b) => n + b.productCount, 0);
  let done = 0;
  const inflight = new Set<Promise<void>>();
  for (const plan of plans) {
    // A shutdown stops between brands: what was published stays, the index is not rewritten.
    if (ctx.signal?.aborted) break;
    const build = new BrandBuild(plan, {
      publisher,
      feedsUrl: config.FEEDS_URL,
      sellerName: storeName,
    });
    try {
      await build.fill(reader);
    } catch (err) {
      await build.abort();
      ctx.logger.error({ err, brand: plan.name }, 'discovery: brand failed');
      failures.push(`discovery:${plan.slug}`);
      continue;
    }
    done += build.count;
    ctx.progress?.({ stage: 'discovery', done, total });
    const commit = (async () => {
      try {
        changedFiles.push(...(await build.commit()));
        const published = {
          product_count: plan.productCount,
          updated_at: plan.updatedAt,
          build_key: buildKey,
          published_at: ctx.now().toISOString(),
        };
        await recordBrandPublication(ctx.db, plan.name, published);
        Object.assign(known.get(plan.name)!, published);
      } catch (err) {
        await build.abort();
        ctx.logger.error({ err, brand: plan.name }, 'discovery: brand failed');
        failures.push(`discovery:${plan.slug}`);
      }
    })();
    inflight.add(commit);
    void commit.finally(() => inflight.delete(commit));
    // A loop, not one race: each pass waits for one commit, until few enough are left.
    while (inflight.size >= COMMITS_IN_FLIGHT) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  ctx.signal?.throwIfAborted();

  // The index names the brands whose files are in place (a failed rebuild keeps the last).
  const listed = [...current.keys()]
    .map((name) => known.get(name)!)
    .filter((s) => s.product_count > 0)
    .sort((a, b) => (a.slug < b.slug ? -1 : 1));
  const gone = [...known.values()].filter((s) => s.product_count > 0 && !current.has(s.name));

  changedFiles.push(...(await publishServingRules(ctx, publisher, listed)));
  const entries = listed.map((s) => ({
    slug: s.slug,
    name: s.name,
    product_count: s.product_count,
    updated_at: s.updated_at!,
    ...brandUrls(config.FEEDS_URL, s.slug),
  }));
  changedFiles.push(
    ...(await publishAgentFiles(publisher, {
      feedsUrl: config.FEEDS_URL,
      storeName,
      brands: entries,
    })),
  );
  const home = await publisher.write(
    'index.html',
    renderHomePage({ storeName, indexUrl: `${config.FEEDS_URL}/v1/index.json`, brands: entries }),
    { ...SMALL_FILE, contentType: 'text/html; charset=utf-8' },
  );
  if (home.changed) changedFiles.push('index.html');
  const index = await publishIndex(publisher, entries, ctx.now());
  if (index.changed) changedFiles.push('v1/index.json');

  // Only now that the index no longer names them may the files of gone brands go.
  for (const s of gone) {
    await removeBrandFiles(publisher, s.slug);
    await recordBrandPublication(ctx.db, s.name, {
      product_count: 0,
      updated_at: null,
      build_key: null,
      published_at: ctx.now().toISOString(),
    });
  }
  if (changedFiles.length || gone.length) {
    await writeMarker(publisher, ctx.now(), config.FEEDS_URL);
  }
  await publisher.commit();

  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const rebuilt = plans.length - failures.length;
  return {
    stage: 'discovery',
    summary: [
      `discovery: ${listed.length} brands, ${total} products; rebuilt ${rebuilt}, removed ${gone.length}, ${changedFiles.length} files changed, index ${index.changed ? 'updated' : 'unchanged'} (${seconds} s)`,
    ],
    failures,
  };
}

async function isUpToDate(
  publisher: Publisher,
  state: DiscoveryBrandRow,
  b: CurrentBrand,
  buildKey: string,
): Promise<boolean> {
  if (
    state.product_count !== b.productCount ||
    state.updated_at !== b.updatedAt ||
    state.build_key !== buildKey
  )
    return false;
  // Files removed by hand are put back.
  const f = brandFiles(state.slug);
  const exists = await Promise.all(
    [f.json, f.page, f.feedJson, f.feedNdjson].map((p) => publisher.exists(p)),
  );
  return exists.every(Boolean);
}

async function publishServingRules(
  ctx: PipelineContext,
  publisher: Publisher,
  listed: DiscoveryBrandRow[],
): Promise<string[]> {
  const { config } = ctx;
  const changed: string[] = [];
  const plain = { gzip: false, contentType: 'text/plain; charset=utf-8' };
  if ((await publisher.write('_headers', renderHeadersFile(), plain)).changed)
    changed.push('_headers');
  const redirects = renderRedirectsFile(listed.map((s) => s.slug));
  if ((await publisher.write('_redirects', redirects, plain)).changed) changed.push('_redirects');
  // The rules a CDN in front of a bucket needs (PUBLISH_TARGET): beside _headers, never served.
  const rules: [string, string, string][] = [
    ['cdn/cloudfront-function.js', renderCloudFrontFunction(), 'text/javascript; charset=utf-8'],
    ['cdn/cloudflare-rules.json', renderCloudflareRules(), 'application/json; charset=utf-8'],
  ];
  for (const [key, content, contentType] of rules)
    if ((await publisher.write(key, content, { gzip: false, contentType })).changed)
      changed.push(key);
  let nginx: string;
  try {
    nginx = renderNginxConfig({
      publicDir: config.PUBLIC_DIR,
      host: config.HOST,
      port: config.FEEDS_PORT,
      windows: rateWindows({
        minute: config.DISCOVERY_LIMIT_PER_MINUTE,
        hour: config.DISCOVERY_LIMIT_PER_HOUR,
        day: config.DISCOVERY_LIMIT_PER_DAY,
      }),
      trustProxy: config.DISCOVERY_TRUST_PROXY,
    });
  } catch (err) {
    // An nginx config is a convenience: a PUBLIC_DIR nginx cannot name must not stop the registry.
    ctx.logger.warn({ err }, 'discovery: no nginx config written');
    return changed;
  }
  // Beside the store, not in the published tree: a file for the local nginx, always on disk.
  const nginxFile = nginxConfigPath(config);
  const local = new FsPublisher(path.dirname(nginxFile));
  await local.write(path.basename(nginxFile), nginx, plain);
  return changed;
}

/**
 * index.json, last. Its generated_at is the time its content last changed: when the brands
 * are the same as in the published index, the old stamp is kept and the file keeps its bytes.
 */
async function publishIndex(
  publisher: Publisher,
  brands: object[],
  now: Date,
): Promise<{ changed: boolean }> {
  const key = 'v1/index.json';
  const body = JSON.stringify(brands);
  let generatedAt = now.toISOString();
  try {
    const previous = JSON.parse(String(await publisher.read(key))) as {
      acp_version?: string;
      generated_at?: string;
      brands?: unknown;
    };
    if (
      previous.acp_version === ACP_VERSION &&
      typeof previous.generated_at === 'string' &&
      JSON.stringify(previous.brands) === body
    )
      generatedAt = previous.generated_at;
  } catch {
    // No index yet, or an unreadable one: write a new one.
  }
  const content = `{"acp_version":${JSON.stringify(ACP_VERSION)},"generated_at":${JSON.stringify(generatedAt)},"brand_count":${brands.length},"brands":${body}}\n`;
  return publisher.write(key, content, {
    ...SMALL_FILE,
    contentType: 'application/json; charset=utf-8',
  });
}

async function removeBrandFiles(publisher: Publisher, slug: string): Promise<void> {
  const f = brandFiles(slug);
  await publisher.remove(f.json); // with its .gz and .br
  await publisher.remove(f.pageDir, { recursive: true });
  await publisher.remove(f.feedDir, { recursive: true });
}

/** A new marker on each publication (a fresh id, so even the same clock gives new content). */
async function writeMarker(publisher: Publisher, now: Date, feedsUrl: string): Promise<void> {
  const content = `${JSON.stringify({ published_at: now.toISOString(), id: randomUUID(), feeds_url: feedsUrl })}\n`;
  await publisher.write(PUBLISHED_MARKER, content, {
    gzip: false,
    contentType: 'application/json; charset=utf-8',
  });
}

/** The FEEDS_URL the published tree under `root` was built with, when its marker says. */
export async function publishedFeedsUrl(root: string): Promise<string | undefined> {
  try {
    const marker = JSON.parse(
      await fs.promises.readFile(path.join(root, PUBLISHED_MARKER), 'utf8'),
    ) as { feeds_url?: unknown };
    return typeof marker.feeds_url === 'string' ? marker.feeds_url : undefined;
  } catch {
    return undefined; // nothing published yet, or a marker from before it named the URL
  }
}

/**
 * A warning when FEEDS_URL differs from the URL the published registry was built with: the
 * next run rewrites every URL in it (every brand file, page and feed). Undefined otherwise.
 */
export async function feedsUrlChange(
  config: Pick<Config, 'FEEDS_URL' | 'PUBLIC_DIR'>,
): Promise<string | undefined> {
  const built = await publishedFeedsUrl(config.PUBLIC_DIR);
  if (built === undefined || built === config.FEEDS_URL) return undefined;
  return `FEEDS_URL is ${config.FEEDS_URL} but the registry in ${config.PUBLIC_DIR} was built with ${built}: the next pipeline run rewrites every URL in it (check FEEDS_URL in the environment and in .env)`;
}
