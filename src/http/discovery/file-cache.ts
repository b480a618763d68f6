import fs from 'node:fs';
import path from 'node:path';
import { COMMON_HEADERS, cacheControlFor, contentTypeFor } from '../../domain/discovery/policy.js';

export type Encoding = 'identity' | 'gzip' | 'br';

/** One stored form of a published file: the file itself or its .gz / .br sibling. */
export interface Representation {
  encoding: Encoding;
  path: string;
  size: number;
  etag: string;
  mtimeMs: number;
  /** The body when held in memory; undefined for files too large to cache (read per request). */
  body: Buffer | undefined;
  /** Response headers for a 200 (flat name, value list), all but X-RateLimit-Remaining. */
  headers: string[];
  /** Headers for a 304. */
  notModifiedHeaders: string[];
  /** Identity of the file on disk: a republished file is a new inode (renamed into place). */
  stamp: string;
}

export interface PublishedFile {
  file: string;
  identity: Representation;
  gzip: Representation | undefined;
  br: Representation | undefined;
  epoch: number;
  lastUsed: number;
  bytes: number;
}

export interface FileCacheOptions {
  /** Bytes of bodies held in memory at most. */
  maxBytes: number;
  /** Larger files are read from disk on each request. */
  maxFileBytes: number;
}

/**
 * Published files held in memory with their headers ready, so a hit costs a Map lookup and a
 * write (Node serving a Buffer reaches about half of nginx here; a read stream, a sixth).
 * Entries are trusted until the publication epoch moves (the pipeline wrote its marker); then
 * each is re-checked by stat on its next use and reloaded only if it is another file.
 */
export class FileCache {
  private readonly files = new Map<string, PublishedFile>();
  private readonly loading = new Map<string, Promise<PublishedFile | null>>();
  private bytes = 0;
  private tick = 0;
  epoch = 0;

  constructor(
    private readonly root: string,
    private readonly options: FileCacheOptions,
  ) {}

  /** The file, when it is in memory and known to be current; else undefined (call load). */
  get(file: string): PublishedFile | undefined {
    const entry = this.files.get(file);
    if (!entry || entry.epoch !== this.epoch) return undefined;
    entry.lastUsed = ++this.tick;
    return entry;
  }

  /** Reads (or re-checks) a published file; null when there is none. */
  load(file: string): Promise<PublishedFile | null> {
    let pending = this.loading.get(file);
    if (!pending) {
      pending = this.read(file).finally(() => this.loading.delete(file));
      this.loading.set(file, pending);
    }
    return pending;
  }

  /** Marks every entry for a re-check (the tree was republished). */
  invalidate(): void {
    this.epoch++;
  }

  get size(): number {
    return this.bytes;
  }

  private async read(file: string): Promise<PublishedFile | null> {
    const epoch = this.epoch;
    const full = path.join(this.root, file);
    // Defence in depth: the path resolver already refuses anything that could leave root.
    if (!full.startsWith(this.root + path.sep)) return null;
    const old = this.files.get(file);
    const [identity, gzip, br] = await Promise.all([
      this.represent(file, full, 'identity', old?.identity),
      this.represent(file, `${full}.gz`, 'gzip', old?.gzip),
      this.represent(file, `${full}.br`, 'br', old?.br),
    ]);
    if (old) {
      this.files.delete(file);
      this.bytes -= old.bytes;
    }
    if (!identity) return null;
    const entry: PublishedFile = {
      file,
      identity,
      gzip,
      br,
      epoch,
      lastUsed: ++this.tick,
      bytes: [identity, gzip, br].reduce((n, r) => n + (r?.body?.length ?? 0), 0),
    };
    this.files.set(file, entry);
    this.bytes += entry.bytes;
    if (this.bytes > this.options.maxBytes) this.evict();
    return entry;
  }

  private async represent(
    file: string,
    full: string,
    encoding: Encoding,
    previous: Representation | undefined,
  ): Promise<Representation | undefined> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(full, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const stat = await handle.stat({ bigint: true });
      if (!stat.isFile()) return undefined;
      const stamp = `${stat.ino.toString(36)}-${stat.mtimeNs.toString(36)}-${stat.size.toString(36)}`;
      if (previous && previous.stamp === stamp) return previous;
      const size = Number(stat.size);
      const keep = size <= this.options.maxFileBytes && size <= this.options.maxBytes;
      // Read through the handle we stat'ed: the body is the file the stamp names, even if a
      // new one is renamed into place meanwhile.
      const body = keep ? await handle.readFile() : undefined;
      return representation(file, full, encoding, stamp, size, Number(stat.mtimeMs), body);
    } finally {
      await handle.close();
    }
  }

  private evict(): void {
    const target = this.options.maxBytes * 0.8;
    const byAge = [...this.files.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const entry of byAge) {
      if (this.bytes <= target) break;
      this.files.delete(entry.file);
      this.bytes -= entry.bytes;
    }
  }
}

/** Headers of a representation, from its stat; also used for files read per request. */
export function representation(
  file: string,
  full: string,
  encoding: Encoding,
  stamp: string,
  size: number,
  mtimeMs: number,
  body: Buffer | undefined,
): Representation {
  // Strong ETag from the file's identity: a file the pipeline left unchanged keeps it.
  const etag = `"${stamp}${encoding === 'identity' ? '' : `-${encoding}`}"`;
  const lastModified = new Date(Math.floor(mtimeMs / 1000) * 1000).toUTCString();
  const shared = [
    ...COMMON_HEADERS.flat(),
    'Cache-Control',
    cacheControlFor(file),
    'ETag',
    etag,
    'Last-Modified',
    lastModified,
    'Vary',
    'Accept-Encoding',
  ];
  const headers = [
    ...shared,
    'Content-Type',
    contentTypeFor(file)!,
    'Content-Length',
    String(size),
    ...(encoding === 'identity' ? [] : ['Content-Encoding', encoding]),
  ];
  return {
    encoding,
    path: full,
    size,
    etag,
    mtimeMs,
    body,
    headers,
    notModifiedHeaders: shared,
    stamp,
  };
}
