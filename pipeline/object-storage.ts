import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { parseCdnPurge, parsePublishTarget, type Config } from '../src/config.js';
import { cacheControlFor, contentTypeFor } from '../src/domain/discovery/policy.js';
import type { Db } from '../src/db/store.js';
import { recordPublication, type PurgeWiring } from '../src/domain/publications/publications.js';
import { createPurger } from '../src/publish/cdn.js';
import { S3Publisher, type ObjectStorageSettings } from '../src/publish/s3.js';

/** How long a CDN may serve a cached object while the bucket answers errors (a day). */
const STALE_IF_ERROR = 'stale-if-error=86400';

/** Where the manifest of the published tree is kept between runs: beside the store. */
export function manifestPath(config: Pick<Config, 'DATA_DIR'>): string {
  return path.join(config.DATA_DIR, 'publish', 'manifest.json');
}

/**
 * The settings of the object-storage Publisher from PUBLISH_TARGET and the AWS_* credentials
 * (CONTRACT part 12), or undefined when no target is set. Objects carry the headers the
 * embedded discovery server gives (domain/discovery/policy.ts), plus stale-if-error.
 */
export function objectStorageSettings(config: Config): ObjectStorageSettings | undefined {
  if (!config.PUBLISH_TARGET) return undefined;
  const target = parsePublishTarget(config.PUBLISH_TARGET);
  // One orphans file per target: another bucket's keys are no business of this one.
  const id = createHash('sha256').update(target.label).digest('hex').slice(0, 16);
  return {
    target,
    credentials: {
      accessKeyId: config.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: config.AWS_SECRET_ACCESS_KEY ?? '',
      sessionToken: config.AWS_SESSION_TOKEN,
    },
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    root: config.PUBLIC_DIR,
    manifestFile: manifestPath(config),
    orphansFile: path.join(config.DATA_DIR, 'publish', `orphans-${id}.json`),
    syncedFile: path.join(config.DATA_DIR, 'publish', `synced-${id}.json`),
    deleteGraceSeconds: config.PUBLISH_DELETE_GRACE,
    maxDeletes: config.PUBLISH_MAX_DELETES,
    multipartThreshold: config.PUBLISH_MULTIPART_THRESHOLD,
    partSize: config.PUBLISH_PART_SIZE,
    cacheControl: (key) => `${cacheControlFor(key)}, ${STALE_IF_ERROR}`,
    contentType: contentTypeFor,
  };
}

/**
 * The discovery stage's Publisher when PUBLISH_TARGET is set: the tree on disk as before, and
 * at each commit the bucket brought to it, recorded as a publication.
 */
export function objectStoragePublisher(
  db: Db,
  config: Config,
  settings: ObjectStorageSettings,
  base: { now: () => Date; signal?: AbortSignal | undefined; logger?: Logger | undefined },
): S3Publisher {
  const { now } = base;
  const purge = purgeWiring(config, base);
  return new S3Publisher(settings, {
    sync: { ...(base.signal ? { signal: base.signal } : {}), now },
    record: async (run) => {
      const report = await recordPublication(
        db,
        { target: settings.target.label, trigger: 'pipeline', now, purge },
        run,
      );
      base.logger?.info(
        {
          target: report.target,
          uploaded: report.uploaded,
          skipped: report.skipped,
          deleted: report.deleted,
          held: report.held,
          bytes: report.bytes,
          ...report.timings,
        },
        'published to object storage',
      );
      return report;
    },
  });
}

/** The CDN purge CDN_PURGE asks for after each upload, or undefined when it is not set. */
export function purgeWiring(
  config: Config,
  base: { signal?: AbortSignal | undefined; logger?: Logger | undefined } = {},
): PurgeWiring | undefined {
  if (!config.CDN_PURGE) return undefined;
  const setting = parseCdnPurge(config.CDN_PURGE);
  const purger =
    setting.kind === 'webhook'
      ? undefined
      : createPurger(
          setting,
          {
            cloudflareToken: config.CLOUDFLARE_API_TOKEN,
            fastlyToken: config.FASTLY_API_TOKEN,
            bunnyKey: config.BUNNY_API_KEY,
            aws: {
              accessKeyId: config.AWS_ACCESS_KEY_ID ?? '',
              secretAccessKey: config.AWS_SECRET_ACCESS_KEY ?? '',
              sessionToken: config.AWS_SESSION_TOKEN,
            },
          },
          {
            allowPrivate: config.ALLOW_PRIVATE_TARGETS,
            ...(base.signal ? { signal: base.signal } : {}),
          },
        );
  return { purger, feedsUrl: config.FEEDS_URL, logger: base.logger };
}
