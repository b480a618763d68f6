import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { randomBase62 } from '../ids.js';
import { Gatherer, WRITE_BYTES } from './gather.js';
import { OffThreadFile } from './off-thread-file.js';
import {
  writeWhole,
  type FileDigests,
  type OpenFile,
  type PublishedChanges,
  type PublishFileOptions,
  type PublishResult,
  type Publisher,
} from './publisher.js';

export type { PublishResult } from './publisher.js';

/** How a file is written: its siblings, compression levels, durability (publisher.ts). */
export type AtomicFileOptions = PublishFileOptions;

/** What a stream holds before a write waits for it: a few gathered writes. */
const STREAM_BUFFER = 4 * WRITE_BYTES;

/** Resolves when every stream given has drained. */
function drained(streams: Writable[]): Promise<void> {
  return Promise.all(streams.map((stream) => once(stream, 'drain'))).then(() => undefined);
}

/**
 * A file written under a temporary name in its final directory and renamed into place on
 * commit, so a reader sees the old file or the new one, never a part. Content equal to the
 * published file is not rewritten (its bytes, mtime and ETag stay). Writes honour
 * backpressure: `await file.write(chunk)` only waits when the stream's buffer is full.
 */
export class AtomicFile implements OpenFile {
  readonly path: string;
  private readonly tmp: string;
  private readonly out: fs.WriteStream;
  private readonly gzipTmp: string | undefined;
  private readonly gzip: zlib.Gzip | undefined;
  private readonly gzipOut: fs.WriteStream | undefined;
  private readonly brotliTmp: string | undefined;
  private readonly brotli: zlib.BrotliCompress | undefined;
  private readonly brotliOut: fs.WriteStream | undefined;
  private readonly hash = createHash('sha256');
  /** MD5 of the plain file and the digests of the siblings, when `digests` is asked. */
  private readonly md5: Hash | undefined;
  private readonly gzipDigest: Digest | undefined;
  private readonly brotliDigest: Digest | undefined;
  private bytes = 0;
  private done = false;
  /** The first error of a stream (disk full...), surfaced by the next write or commit. */
  private failure: Error | undefined;
  /** Writes gathered into 1 MiB buffers: each stream write is a trip to the thread pool. */
  private readonly gathered = new Gatherer();

  /**
   * @param written called with each buffer given on whole (a large write, or gathered ones)
   *   once every stream is done with it: the caller may use its memory again
   */
  constructor(
    finalPath: string,
    private readonly options: AtomicFileOptions = {},
    private readonly written?: (data: Buffer) => void,
  ) {
    this.path = finalPath;
    fs.mkdirSync(path.dirname(finalPath), { recursive: true });
    const suffix = `.tmp-${process.pid}-${randomBase62(8)}`;
    this.tmp = path.join(path.dirname(finalPath), `.${path.basename(finalPath)}${suffix}`);
    this.out = fs.createWriteStream(this.tmp, { highWaterMark: STREAM_BUFFER });
    if (options.gzip ?? true) {
      this.gzipTmp = `${this.tmp}.gz`;
      // A buffer as large as the file's: with zlib's default 16 KiB every write of a batch
      // would wait for compression to finish, and the two would never run side by side.
      this.gzip = zlib.createGzip({
        level: options.gzipLevel ?? 6,
        chunkSize: 64 * 1024,
        // Passed on to the stream; @types/node leaves it out of ZlibOptions.
        ...{ highWaterMark: STREAM_BUFFER },
      });
      this.gzipOut = fs.createWriteStream(this.gzipTmp, { highWaterMark: 1 << 20 });
      this.gzip.pipe(this.gzipOut);
      if (options.digests) this.gzipDigest = new Digest(this.gzip);
    }
    if (options.brotli) {
      this.brotliTmp = `${this.tmp}.br`;
      this.brotli = zlib.createBrotliCompress({
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: options.brotliQuality ?? 5 },
        ...{ highWaterMark: STREAM_BUFFER },
      });
      this.brotliOut = fs.createWriteStream(this.brotliTmp, { highWaterMark: 1 << 20 });
      this.brotli.pipe(this.brotliOut);
      if (options.digests) this.brotliDigest = new Digest(this.brotli);
    }
    if (options.digests) this.md5 = createHash('md5');
    // Without a listener a write error would crash the process; keep it for the caller.
    const keep = (err: Error) => {
      this.failure ??= err;
    };
    this.out.on('error', keep);
    this.gzip?.on('error', keep);
    this.gzipOut?.on('error', keep);
    this.brotli?.on('error', keep);
    this.brotliOut?.on('error', keep);
  }

  /** Appends a chunk; resolves at once unless a buffer is full. */
  write(chunk: string | Buffer): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    const full: Writable[] = [];
    for (const data of this.gathered.add(chunk)) full.push(...this.writeData(data));
    return full.length > 0 ? drained(full) : undefined;
  }

  /** Gives bytes to the hashes and every stream; answers the streams whose buffer is now full. */
  private writeData(data: Buffer): Writable[] {
    this.hash.update(data);
    this.md5?.update(data);
    this.bytes += data.length;
    const full: Writable[] = [];
    const streams = [this.out, this.gzip, this.brotli].filter((s) => s !== undefined);
    const done = this.written ? this.doneWith(data, streams.length) : undefined;
    for (const stream of streams) {
      if (!stream.write(data, done)) full.push(stream);
    }
    return full;
  }

  /** A write callback that tells `written` once every stream has called it without error. */
  private doneWith(data: Buffer, streams: number): (err?: Error | null) => void {
    let left = streams;
    let failed = false;
    return (err) => {
      if (err) failed = true;
      if (--left === 0 && !failed) this.written!(data);
    };
  }

  /** Finishes the file and renames it (and its .gz) into place unless the content is unchanged. */
  async commit(): Promise<PublishResult> {
    if (this.done) throw new Error(`${this.path} was already committed or aborted`);
    this.done = true;
    try {
      return await this.finish();
    } catch (err) {
      await this.discard();
      throw err;
    }
  }

  private async finish(): Promise<PublishResult> {
    if (this.failure) throw this.failure;
    // The last writes go in as they are (end() waits for the streams' buffers to drain), and
    // the streams finish side by side.
    const rest = this.gathered.take();
    if (rest) this.writeData(rest);
    const closed = [once(this.out, 'close')];
    this.out.end();
    if (this.gzip && this.gzipOut) {
      closed.push(once(this.gzipOut, 'close'));
      this.gzip.end();
    }
    if (this.brotli && this.brotliOut) {
      closed.push(once(this.brotliOut, 'close'));
      this.brotli.end();
    }
    await Promise.all(closed);
    if (this.failure) throw this.failure;
    if (this.options.durable) await syncFile(this.tmp);
    const sha256 = this.hash.digest('hex');
    // Only a published file of the same size can hold the same content: compare hashes
    // (the caller's, or one read from disk) then, and never trust a hash for a missing file.
    let unchanged = false;
    if ((await sizeOfFile(this.path)) === this.bytes) {
      const previous = this.options.previousSha256 ?? (await sha256OfFile(this.path));
      unchanged =
        previous === sha256 &&
        (!this.gzipTmp || fs.existsSync(`${this.path}.gz`)) &&
        (!this.brotliTmp || fs.existsSync(`${this.path}.br`));
    }
    if (unchanged) {
      await removeQuietly(this.tmp);
      if (this.gzipTmp) await removeQuietly(this.gzipTmp);
      if (this.brotliTmp) await removeQuietly(this.brotliTmp);
      return { changed: false, sha256, bytes: this.bytes, path: this.path };
    }
    // The compressed siblings go first: a reader choosing one by Accept-Encoding never gets an
    // older body than a reader of the plain file would after the renames.
    if (this.brotliTmp) await fs.promises.rename(this.brotliTmp, `${this.path}.br`);
    if (this.gzipTmp) await fs.promises.rename(this.gzipTmp, `${this.path}.gz`);
    await fs.promises.rename(this.tmp, this.path);
    return { changed: true, sha256, bytes: this.bytes, path: this.path, ...this.digests() };
  }

  /** The MD5 and the siblings' digests, when asked for. */
  private digests(): Pick<PublishResult, 'md5' | 'siblings'> {
    if (!this.md5) return {};
    const siblings: NonNullable<PublishResult['siblings']> = [];
    if (this.gzipDigest) siblings.push({ suffix: '.gz', ...this.gzipDigest.result() });
    if (this.brotliDigest) siblings.push({ suffix: '.br', ...this.brotliDigest.result() });
    return { md5: this.md5.digest('hex'), siblings };
  }

  /** Drops the temporary files; the published file is untouched. */
  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.discard();
  }

  /** Stops every stream and removes the temporary files. */
  private async discard(): Promise<void> {
    // A file stream still opening creates its file after destroy(): wait for every stream to
    // close, so the temporaries are on disk (or never will be) before they are removed.
    const streams = [this.out, this.gzip, this.gzipOut, this.brotli, this.brotliOut];
    await Promise.all(
      streams.map((stream) => {
        if (!stream || stream.closed) return undefined;
        const closed = once(stream, 'close').catch(() => undefined);
        stream.destroy();
        return closed;
      }),
    );
    await removeQuietly(this.tmp);
    if (this.gzipTmp) await removeQuietly(this.gzipTmp);
    if (this.brotliTmp) await removeQuietly(this.brotliTmp);
  }
}

/** MD5 and SHA-256 of what a compressor emits, read beside the stream it is piped to. */
class Digest {
  private readonly md5 = createHash('md5');
  private readonly sha256 = createHash('sha256');
  private bytes = 0;

  constructor(source: NodeJS.ReadableStream) {
    // A second 'data' listener beside pipe(): it sees every chunk and never resumes a
    // stream the pipe paused for backpressure.
    source.on('data', (chunk: Buffer) => {
      this.md5.update(chunk);
      this.sha256.update(chunk);
      this.bytes += chunk.length;
    });
  }

  result(): FileDigests {
    return { bytes: this.bytes, md5: this.md5.digest('hex'), sha256: this.sha256.digest('hex') };
  }
}

/** Hex SHA-256 of a file, or undefined when it does not exist. */
export async function sha256OfFile(file: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }))
      hash.update(chunk as Buffer);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return hash.digest('hex');
}

async function sizeOfFile(file: string): Promise<number | undefined> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The name AtomicFile gives its temporaries: `.<name>.tmp-<pid>-<random>` (`.gz`, `.br`). */
const TEMPORARY_NAME = /^\..+\.tmp-(\d+)-[A-Za-z0-9]+(\.gz|\.br)?$/;

/** The pid that wrote a temporary file, or undefined when the name is not one of ours. */
export function temporaryWriter(name: string): number | undefined {
  const m = TEMPORARY_NAME.exec(name);
  return m ? Number(m[1]) : undefined;
}

export interface SweepOptions {
  /** Temporaries whose writer (a pid) this returns true for are left alone. */
  spare?: (pid: number) => boolean;
}

/**
 * Removes the temporary files a killed run left behind (AtomicFile's names only, nothing
 * else) under a directory and its subdirectories. Callers hold the pipeline lock, or spare
 * the writers that are still alive, so no file a live run is writing goes.
 */
export async function removeStaleTemporaries(
  dir: string,
  options: SweepOptions = {},
): Promise<number> {
  let removed = 0;
  const walk = async (d: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) {
        await walk(full);
        continue;
      }
      const writer = temporaryWriter(e.name);
      if (writer === undefined || options.spare?.(writer)) continue;
      await removeQuietly(full);
      removed++;
    }
  };
  await walk(dir);
  return removed;
}

async function removeQuietly(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true });
}

/** Flushes a written file to the disk (before a rename makes it the published one). */
async function syncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes a file; whether it was there. */
async function removeIfPresent(file: string): Promise<boolean> {
  try {
    await fs.promises.rm(file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
}

/**
 * The filesystem Publisher: keys are paths under `root`; each file is an AtomicFile (a
 * temporary in its final directory, renamed into place on commit; unchanged content left as
 * it was), with the compressed siblings its options ask for. `defaults` apply to every file.
 */
export class FsPublisher implements Publisher {
  private written: string[] = [];
  private removed: string[] = [];

  constructor(
    readonly root: string,
    private readonly defaults: PublishFileOptions = {},
  ) {}

  /** The file a key names; a key that leaves the root is refused. */
  pathOf(key: string): string {
    const full = path.resolve(this.root, key);
    const root = path.resolve(this.root);
    if (full !== root && !full.startsWith(root + path.sep)) {
      throw new Error(`publisher: the key '${key}' is outside ${this.root}`);
    }
    return full;
  }

  open(key: string, options: PublishFileOptions = {}): OpenFile {
    const { offThread, ...fileOptions } = { ...this.defaults, ...options };
    const file = offThread
      ? new OffThreadFile(this.pathOf(key), fileOptions)
      : new AtomicFile(this.pathOf(key), fileOptions);
    return {
      write: (chunk) => file.write(chunk),
      commit: async () => {
        const result = await file.commit();
        if (result.changed) this.written.push(key);
        return { ...result, path: key };
      },
      abort: () => file.abort(),
    };
  }

  write(
    key: string,
    data: string | Buffer | AsyncIterable<string | Buffer>,
    options: PublishFileOptions = {},
  ): Promise<PublishResult> {
    return writeWhole(this.open(key, options), data);
  }

  async read(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.promises.readFile(this.pathOf(key));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    return fs.promises.access(this.pathOf(key)).then(
      () => true,
      () => false,
    );
  }

  async list(dir: string): Promise<string[]> {
    try {
      const entries = await fs.promises.readdir(this.pathOf(dir), { withFileTypes: true });
      return entries.filter((e) => e.isFile()).map((e) => e.name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw err;
    }
  }

  async remove(key: string, options: { recursive?: boolean } = {}): Promise<void> {
    const full = this.pathOf(key);
    if (options.recursive) {
      const files: string[] = [];
      const walk = async (d: string, prefix: string): Promise<void> => {
        let entries: fs.Dirent[];
        try {
          entries = await fs.promises.readdir(d, { withFileTypes: true });
        } catch {
          return;
        }
        const names = new Set(entries.map((e) => e.name));
        for (const e of entries) {
          if (e.isDirectory()) await walk(path.join(d, e.name), `${prefix}/${e.name}`);
          else if (temporaryWriter(e.name) !== undefined) continue;
          // A compressed sibling goes with its file, which names both.
          else if (!names.has(e.name.replace(/\.(gz|br)$/, '')) || !/\.(gz|br)$/.test(e.name))
            files.push(`${prefix}/${e.name}`);
        }
      };
      await walk(full, key);
      await fs.promises.rm(full, { recursive: true, force: true });
      this.removed.push(...files);
      return;
    }
    // The file and its compressed siblings; the batch names the file.
    let present = false;
    for (const file of [full, `${full}.gz`, `${full}.br`]) {
      if (await removeIfPresent(file)) present = true;
    }
    if (present) this.removed.push(key);
  }

  async commit(): Promise<PublishedChanges> {
    const changes = { written: this.written, removed: this.removed };
    this.written = [];
    this.removed = [];
    return changes;
  }
}
