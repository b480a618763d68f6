import fs from 'node:fs';
import path from 'node:path';
import type { PublishTarget } from '../config.js';
import { FsPublisher } from './fs.js';
import {
  hasBucketSiblings,
  loadManifest,
  saveManifest,
  scanTree,
  siblingOf,
  type Manifest,
  type ManifestEntry,
} from './manifest.js';
import {
  writeWhole,
  type OpenFile,
  type PublishedChanges,
  type PublishFileOptions,
  type PublishResult,
  type Publisher,
} from './publisher.js';
import {
  createS3Client,
  DELETE_BATCH,
  type RemoteObject,
  type S3Client,
  type S3ClientOptions,
  type S3Credentials,
} from './s3-client.js';

/**
 * The object-storage Publisher (CONTRACT part 12): the tree is written on disk as FsPublisher
 * writes it (PUBLIC_DIR stays what `serve` and nginx read), with a manifest of every file's
 * digests filled while it is written; `commit()` then brings the bucket to the tree: changed
 * objects only, brand objects (compressed siblings before plain ones) first, then index.json,
 * then the home page, so a reader of the bucket never meets an index naming a missing object.
 */

export interface ObjectStorageSettings {
  target: PublishTarget;
  credentials: S3Credentials;
  /** ALLOW_PRIVATE_TARGETS: the endpoint goes through the outbound address guard. */
  allowPrivate: boolean;
  /** The tree on disk (PUBLIC_DIR). */
  root: string;
  /** Where the manifest is kept between runs. */
  manifestFile: string;
  /** Where the bucket's orphans (keys the tree no longer holds) and when each was first seen are kept. */
  orphansFile: string;
  /** Written when a sync of this target completes, removed when one starts. */
  syncedFile: string;
  /** Seconds an orphan stays before it is deleted (PUBLISH_DELETE_GRACE). */
  deleteGraceSeconds: number;
  /** Deletions one run makes at most without `force` (PUBLISH_MAX_DELETES). */
  maxDeletes: number;
  /** Cache-Control of a plain file's key (the embedded server's, plus stale-if-error). */
  cacheControl: (key: string) => string;
  /** Content type of a plain file's key, when its writer gave none. */
  contentType: (key: string) => string | undefined;
  /** Uploads in flight (default 12). */
  concurrency?: number;
  /** Objects above this many bytes go up in parts (PUBLISH_MULTIPART_THRESHOLD). */
  multipartThreshold?: number;
  /** Bytes a part of a multipart upload (PUBLISH_PART_SIZE). */
  partSize?: number;
  /** Retry settings of the client (tests shorten the backoff). */
  client?: Pick<S3ClientOptions, 'backoffMs' | 'sleep' | 'attempts' | 'onRetry'>;
}

export interface SyncOptions {
  /** Work out what would change; write nothing to the bucket. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Entries computed while the files were written, newer than the saved manifest. */
  recorded?: Manifest;
  /** Objects done so far of the objects to upload. */
  progress?: (update: { done: number; total: number; bytes: number }) => void;
  /** Delete more than `maxDeletes` (or half the bucket's keys) in this run. */
  force?: boolean;
  /** The clock the deletion grace is read against. */
  now?: () => Date;
  /**
   * Called once the changed objects are in the bucket and before any deletion, with the keys
   * uploaded in order (a CDN purge). It must not throw: a failed purge never fails a publish.
   */
  afterUpload?: (changed: string[]) => Promise<void>;
}

export interface SyncReport {
  target: string;
  uploaded: number;
  skipped: number;
  deleted: number;
  bytes: number;
  /** Keys uploaded (or, on a dry run, to upload), in upload order: what a CDN purge names. */
  changed: string[];
  /** Keys in the bucket the tree no longer holds. */
  orphans: string[];
  /** Orphans still within their grace. */
  pending: number;
  /** Orphans due for deletion but held: more than the limit, and no `force`. */
  held: number;
  dryRun: boolean;
  /**
   * Milliseconds of each part of the run, where the time of a change goes: reading the tree's
   * manifest, listing the bucket, comparing, uploading, and the purge (`afterUpload`).
   */
  timings: { scanMs: number; listMs: number; compareMs: number; uploadMs: number; purgeMs: number };
}

/** One object the bucket should hold: its key, the file it is read from, and the file's entry. */
interface Wanted {
  key: string;
  file: string;
  entry: ManifestEntry;
}

const DEFAULT_CONCURRENCY = 12;
/** Never deleted (nor its siblings), whatever the tree holds: agents start from it. */
const INDEX = 'v1/index.json';
const BRAND_JSON = /^v1\/brands\/([^/]+)\.json$/;

/** The plain file a key holds (a sibling's plain file, an extensionless brand's JSON). */
function plainKeyOf(key: string): string {
  return siblingOf(key)?.plain ?? key;
}

/**
 * The upload step of a key: 0 the registry's objects under v1/ (brands, their feeds and pages),
 * 1 the files that name them (index.json, and the root files agents look for: sitemap.xml,
 * llms.txt, robots.txt, .well-known/ucp), 2 the home page.
 */
function stepOf(key: string): number {
  const plain = plainKeyOf(key);
  if (plain === 'index.html') return 2;
  if (plain === INDEX || !plain.startsWith('v1/')) return 1;
  return 0;
}

/** Steps in order; in each, compressed siblings before plain objects. */
function rankOf(want: Wanted): number {
  return stepOf(want.key) * 2 + (want.entry.encoding ? 0 : 1);
}

/**
 * The objects the bucket should hold: every file of the manifest but the serving rules, with
 * the compressed siblings of the feeds alone (hasBucketSiblings; none when the target takes
 * plain objects only) and, for each brand's JSON, an extensionless copy at `v1/brands/<slug>`,
 * the address the registry documents.
 */
function wantedObjects(manifest: Manifest, target: PublishTarget): Map<string, Wanted> {
  const wanted = new Map<string, Wanted>();
  for (const [key, entry] of manifest) {
    if (entry.encoding && (target.encodings === 'plain' || !hasBucketSiblings(plainKeyOf(key))))
      continue;
    // The serving rules (_headers, _redirects, cdn/) configure a CDN; they are not content.
    if (key.startsWith('_') || key.startsWith('cdn/')) continue;
    wanted.set(key, { key, file: key, entry });
    const brand = BRAND_JSON.exec(key);
    if (brand && !entry.encoding) {
      const copy = `v1/brands/${brand[1]}`;
      wanted.set(copy, { key: copy, file: key, entry });
    }
  }
  return wanted;
}

/** Whether the bucket's object differs from what we would upload. */
async function differs(
  client: S3Client,
  want: Wanted,
  remote: RemoteObject | undefined,
): Promise<boolean> {
  if (!remote) return true;
  if (/^[0-9a-f]{32}$/.test(remote.etag)) return remote.etag !== want.entry.md5;
  // Not an MD5 (multipart, SSE-KMS): the size, then the SHA-256 we stored beside the object.
  if (remote.size !== want.entry.size) return true;
  return (await client.headSha256(want.key)) !== want.entry.sha256;
}

/** Runs `fn` over the items with at most `limit` at once; the first failure stops the rest. */
async function inPool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failed: { err: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        signal?.throwIfAborted();
        await fn(item);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.err;
}

/** Milliseconds since the last call (the first: since it was made). */
function lapTimer(): () => number {
  let mark = performance.now();
  return () => {
    const at = performance.now();
    const ms = Math.round(at - mark);
    mark = at;
    return ms;
  };
}

/** Hidden files are ours (temporaries, the publication marker), but for /.well-known/. */
function isHidden(key: string): boolean {
  return key.startsWith('.') && !key.startsWith('.well-known/');
}

function inUploadOrder(objects: Iterable<Wanted>): Wanted[] {
  return [...objects].sort((a, b) => rankOf(a) - rankOf(b) || (a.key < b.key ? -1 : 1));
}

/**
 * Brings the bucket to the tree under `settings.root`: the changed objects uploaded in order
 * (brand objects, siblings first; index.json; the home page), the purge, then deletions. A
 * failure stops before the next step, so the bucket's index keeps naming objects that exist;
 * the next run uploads what is still missing.
 *
 * Where the changes come from: when the files this run wrote are `recorded` and the last sync
 * of this target completed (its `syncedFile`), those go up and are purged first, and the
 * bucket is listed after the purge, to upload (and purge) whatever else differs: a change
 * reaches the CDN without waiting for a listing of the whole bucket. Otherwise (the first run,
 * after a failed one, `agentshelf publish`), the listing comes first and says what differs.
 */
export async function syncTree(
  settings: ObjectStorageSettings,
  options: SyncOptions = {},
): Promise<SyncReport> {
  const { target } = settings;
  const client = createS3Client({
    target,
    credentials: settings.credentials,
    allowPrivate: settings.allowPrivate,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(settings.multipartThreshold ? { multipartThreshold: settings.multipartThreshold } : {}),
    ...(settings.partSize ? { partSize: settings.partSize } : {}),
    ...settings.client,
  });
  const lap = lapTimer();
  const report: SyncReport = {
    target: target.label,
    uploaded: 0,
    skipped: 0,
    deleted: 0,
    bytes: 0,
    changed: [],
    orphans: [],
    pending: 0,
    held: 0,
    dryRun: options.dryRun === true,
    timings: { scanMs: 0, listMs: 0, compareMs: 0, uploadMs: 0, purgeMs: 0 },
  };
  const recorded = [...(options.recorded ?? [])].filter(([key]) => !isHidden(key));
  const early =
    !options.dryRun && recorded.length > 0 && (await exists(settings.syncedFile))
      ? inUploadOrder(wantedObjects(new Map(recorded), target).values())
      : [];
  // Until this sync completes, the next one lists the bucket before it uploads anything.
  if (!options.dryRun) await fs.promises.rm(settings.syncedFile, { force: true });
  if (early.length) {
    report.changed.push(...early.map((w) => w.key));
    await uploadInOrder(client, settings, options, early, report);
    report.timings.uploadMs = lap();
    await options.afterUpload?.(report.changed);
    report.timings.purgeMs = lap();
  }

  const known = await loadManifest(settings.manifestFile);
  for (const [key, entry] of recorded) known.set(key, entry);
  const typeOf = (key: string) => settings.contentType(key) ?? 'application/octet-stream';
  const manifest = await scanTree(settings.root, known, typeOf);
  await saveManifest(settings.manifestFile, manifest);
  const wanted = wantedObjects(manifest, target);
  report.timings.scanMs = lap();
  const remote = new Map<string, RemoteObject>();
  for await (const page of client.list()) for (const o of page) remote.set(o.key, o);
  report.timings.listMs = lap();

  const sent = new Set(report.changed);
  const toUpload: Wanted[] = [];
  await inPool(
    [...wanted.values()].filter((w) => !sent.has(w.key)),
    settings.concurrency ?? DEFAULT_CONCURRENCY,
    async (want) => {
      if (await differs(client, want, remote.get(want.key))) toUpload.push(want);
    },
    options.signal,
  );
  const rest = inUploadOrder(toUpload);
  report.skipped = [...wanted.keys()].filter((k) => !sent.has(k)).length - rest.length;
  report.changed.push(...rest.map((w) => w.key));
  report.orphans = [...remote.keys()].filter((k) => !wanted.has(k)).sort();
  report.timings.compareMs = lap();
  if (!options.dryRun && rest.length) {
    await uploadInOrder(client, settings, options, rest, report);
    report.timings.uploadMs += lap();
    // The whole run's keys: the publication keeps one list of URLs to purge (and retry).
    await options.afterUpload?.(report.changed);
    report.timings.purgeMs += lap();
  }
  await deleteOrphans(client, settings, options, report, remote.size);
  if (!options.dryRun) await saveJson(settings.syncedFile, { synced_at: new Date().toISOString() });
  return report;
}

async function exists(file: string): Promise<boolean> {
  return fs.promises.access(file).then(
    () => true,
    () => false,
  );
}

/** Uploads the changed objects step by step; a step starts once the one before is complete. */
async function uploadInOrder(
  client: S3Client,
  settings: ObjectStorageSettings,
  options: SyncOptions,
  toUpload: Wanted[],
  report: SyncReport,
): Promise<void> {
  const concurrency = settings.concurrency ?? DEFAULT_CONCURRENCY;
  const total = toUpload.length;
  for (let r = 0; r < 6; r++) {
    const batch = toUpload.filter((w) => rankOf(w) === r);
    await inPool(
      batch,
      concurrency,
      async (want) => {
        await upload(client, settings, want);
        report.uploaded++;
        report.bytes += want.entry.size;
        options.progress?.({ done: report.uploaded, total, bytes: report.bytes });
      },
      options.signal,
    );
  }
}

/**
 * Deletes the orphans whose grace has passed, in batches of at most 1,000, unless they are
 * more than `maxDeletes` or half the bucket's keys (then only with `force`). index.json is
 * never deleted. Each orphan's first sighting is kept between runs.
 */
async function deleteOrphans(
  client: S3Client,
  settings: ObjectStorageSettings,
  options: SyncOptions,
  report: SyncReport,
  remoteCount: number,
): Promise<void> {
  const now = (options.now ?? (() => new Date()))();
  const known = await loadJson<Record<string, string>>(settings.orphansFile, {});
  const seen: Record<string, string> = {};
  for (const key of report.orphans)
    if (plainKeyOf(key) !== INDEX) seen[key] = known[key] ?? now.toISOString();
  const graceMs = settings.deleteGraceSeconds * 1000;
  const due = Object.keys(seen).filter((k) => now.getTime() - Date.parse(seen[k]!) >= graceMs);
  report.pending = Object.keys(seen).length - due.length;
  const tooMany = due.length > settings.maxDeletes || due.length > remoteCount / 2;
  if (due.length > 0 && tooMany && !options.force) {
    report.held = due.length;
  } else if (options.dryRun) {
    report.deleted = due.length;
  } else {
    for (let i = 0; i < due.length; i += DELETE_BATCH) {
      const batch = due.slice(i, i + DELETE_BATCH);
      const failed = new Set(await client.deleteBatch(batch));
      for (const key of batch) {
        if (failed.has(key)) continue;
        delete seen[key];
        report.deleted++;
      }
      if (failed.size)
        throw new Error(
          `${failed.size} objects could not be deleted from ${settings.target.label}`,
        );
    }
  }
  if (!options.dryRun) await saveJson(settings.orphansFile, seen);
}

async function loadJson<T>(file: string, fallback: T): Promise<T> {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8')) as T;
  } catch {
    return fallback;
  }
}

async function saveJson(file: string, value: unknown): Promise<void> {
  await new FsPublisher(path.dirname(file)).write(path.basename(file), JSON.stringify(value), {
    gzip: false,
  });
}

async function upload(client: S3Client, settings: ObjectStorageSettings, want: Wanted) {
  const file = path.join(settings.root, want.file);
  await client.put({
    key: want.key,
    body: { length: want.entry.size, open: () => fs.createReadStream(file) },
    range: (start, length) => ({
      length,
      open: () => fs.createReadStream(file, { start, end: start + length - 1 }),
    }),
    contentType: want.entry.contentType,
    cacheControl: settings.cacheControl(plainKeyOf(want.file)),
    contentEncoding: want.entry.encoding,
    md5: want.entry.md5,
    sha256: want.entry.sha256,
  });
}

/**
 * The Publisher over a bucket: writes, reads and listings are the tree on disk's (an
 * FsPublisher over `settings.root`); each changed file's digests are recorded as it is
 * written, and `commit()` ends the local batch and then syncs the bucket (syncTree).
 */
export class S3Publisher implements Publisher {
  private readonly local: FsPublisher;
  private recorded: Manifest = new Map();
  /** What the last commit did to the bucket. */
  lastReport: SyncReport | undefined;

  /**
   * `record` wraps each sync (the pipeline records a publication row around it); `sync` are
   * the options of every sync (signal, clock, the purge after the upload).
   */
  constructor(
    private readonly settings: ObjectStorageSettings,
    private readonly options: {
      sync?: Omit<SyncOptions, 'recorded' | 'dryRun' | 'force'>;
      record?: (
        run: (afterUpload?: SyncOptions['afterUpload']) => Promise<SyncReport>,
      ) => Promise<SyncReport>;
    } = {},
  ) {
    this.local = new FsPublisher(settings.root);
  }

  open(key: string, options: PublishFileOptions = {}): OpenFile {
    const file = this.local.open(key, { ...options, digests: true });
    return {
      write: (chunk) => file.write(chunk),
      commit: async () => {
        const result = await file.commit();
        if (result.changed) await this.record(key, result, options.contentType);
        return result;
      },
      abort: () => file.abort(),
    };
  }

  private async record(key: string, result: PublishResult, contentType: string | undefined) {
    if (!result.md5) return;
    const type = contentType ?? this.settings.contentType(key) ?? 'application/octet-stream';
    const { mtimeMs } = await fs.promises.stat(this.local.pathOf(key));
    this.recorded.set(key, {
      size: result.bytes,
      mtimeMs,
      md5: result.md5,
      sha256: result.sha256,
      contentType: type,
    });
    for (const s of result.siblings ?? []) {
      const sibling = `${key}${s.suffix}`;
      const stat = await fs.promises.stat(this.local.pathOf(sibling));
      this.recorded.set(sibling, {
        size: s.bytes,
        mtimeMs: stat.mtimeMs,
        md5: s.md5,
        sha256: s.sha256,
        contentType: type,
        encoding: s.suffix === '.gz' ? 'gzip' : 'br',
      });
    }
  }

  write(
    key: string,
    data: string | Buffer | AsyncIterable<string | Buffer>,
    options: PublishFileOptions = {},
  ): Promise<PublishResult> {
    return writeWhole(this.open(key, options), data);
  }

  read(key: string): Promise<Buffer | undefined> {
    return this.local.read(key);
  }

  exists(key: string): Promise<boolean> {
    return this.local.exists(key);
  }

  list(dir: string): Promise<string[]> {
    return this.local.list(dir);
  }

  remove(key: string, options: { recursive?: boolean } = {}): Promise<void> {
    return this.local.remove(key, options);
  }

  async commit(): Promise<PublishedChanges> {
    const changes = await this.local.commit();
    const recorded = this.recorded;
    this.recorded = new Map();
    const run = (afterUpload?: SyncOptions['afterUpload']) =>
      syncTree(this.settings, {
        ...this.options.sync,
        recorded,
        ...(afterUpload ? { afterUpload } : {}),
      });
    this.lastReport = await (this.options.record ? this.options.record(run) : run());
    return changes;
  }
}
