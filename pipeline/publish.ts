import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import zlib from 'node:zlib';
import { randomBase62 } from '../src/ids.js';

export interface PublishResult {
  /** false when the new content equals the published file: nothing was replaced. */
  changed: boolean;
  /** Hex SHA-256 of the content (a strong ETag source). */
  sha256: string;
  bytes: number;
  path: string;
}

export interface AtomicFileOptions {
  /** Also publish a gzip sibling (`<file>.gz`), compressed while writing. Default true. */
  gzip?: boolean;
  /** gzip level; compression runs on libuv's thread pool, beside the JS that builds the content. */
  gzipLevel?: number;
  /** Also publish a brotli sibling (`<file>.br`). Default false. */
  brotli?: boolean;
  /** brotli quality (0-11); 4-5 compress about as fast as gzip 6, and smaller. */
  brotliQuality?: number;
  /** SHA-256 of the published file, when the caller knows it, to skip re-reading it. */
  previousSha256?: string;
}

/** gzip gets writes of at least this size: 30 KB writes cost the main thread 5x more. */
const GZIP_WRITE_BYTES = 256 * 1024;

/**
 * A file written under a temporary name in its final directory and renamed into place on
 * commit, so a reader sees the old file or the new one, never a part. Content equal to the
 * published file is not rewritten (its bytes, mtime and ETag stay). Writes honour
 * backpressure: `await file.write(chunk)` only waits when the stream's buffer is full.
 */
export class AtomicFile {
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
  private bytes = 0;
  private done = false;
  /** The first error of a stream (disk full...), surfaced by the next write or commit. */
  private failure: Error | undefined;
  /** Small writes gathered for gzip: each gzip write is a trip to the thread pool. */
  private gzipPending: Buffer[] = [];
  private gzipPendingBytes = 0;

  constructor(
    finalPath: string,
    private readonly options: AtomicFileOptions = {},
  ) {
    this.path = finalPath;
    fs.mkdirSync(path.dirname(finalPath), { recursive: true });
    const suffix = `.tmp-${process.pid}-${randomBase62(8)}`;
    this.tmp = path.join(path.dirname(finalPath), `.${path.basename(finalPath)}${suffix}`);
    this.out = fs.createWriteStream(this.tmp, { highWaterMark: 1 << 20 });
    if (options.gzip ?? true) {
      this.gzipTmp = `${this.tmp}.gz`;
      // A buffer as large as the file's: with zlib's default 16 KiB every write of a batch
      // would wait for compression to finish, and the two would never run side by side.
      this.gzip = zlib.createGzip({
        level: options.gzipLevel ?? 6,
        chunkSize: 64 * 1024,
        // Passed on to the stream; @types/node leaves it out of ZlibOptions.
        ...{ highWaterMark: 1 << 20 },
      });
      this.gzipOut = fs.createWriteStream(this.gzipTmp, { highWaterMark: 1 << 20 });
      this.gzip.pipe(this.gzipOut);
    }
    if (options.brotli) {
      this.brotliTmp = `${this.tmp}.br`;
      this.brotli = zlib.createBrotliCompress({
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: options.brotliQuality ?? 5 },
      });
      this.brotliOut = fs.createWriteStream(this.brotliTmp, { highWaterMark: 1 << 20 });
      this.brotli.pipe(this.brotliOut);
    }
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
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.hash.update(buf);
    this.bytes += buf.length;
    const okPlain = this.out.write(buf);
    let okGzip = true;
    if (this.gzip) {
      this.gzipPending.push(buf);
      this.gzipPendingBytes += buf.length;
      if (this.gzipPendingBytes >= GZIP_WRITE_BYTES) okGzip = this.flushGzip();
    }
    const okBrotli = this.brotli ? this.brotli.write(buf) : true;
    if (okPlain && okGzip && okBrotli) return undefined;
    const waits: Promise<unknown>[] = [];
    if (!okPlain) waits.push(once(this.out, 'drain'));
    if (!okGzip && this.gzip) waits.push(once(this.gzip, 'drain'));
    if (!okBrotli && this.brotli) waits.push(once(this.brotli, 'drain'));
    return Promise.all(waits).then(() => undefined);
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
    this.out.end();
    await once(this.out, 'close');
    if (this.gzip && this.gzipOut) {
      this.flushGzip();
      this.gzip.end();
      await once(this.gzipOut, 'close');
    }
    if (this.brotli && this.brotliOut) {
      this.brotli.end();
      await once(this.brotliOut, 'close');
    }
    if (this.failure) throw this.failure;
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
    return { changed: true, sha256, bytes: this.bytes, path: this.path };
  }

  private flushGzip(): boolean {
    if (!this.gzip || this.gzipPendingBytes === 0) return true;
    const data =
      this.gzipPending.length === 1
        ? this.gzipPending[0]!
        : Buffer.concat(this.gzipPending, this.gzipPendingBytes);
    this.gzipPending = [];
    this.gzipPendingBytes = 0;
    return this.gzip.write(data);
  }

  /** Drops the temporary files; the published file is untouched. */
  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.discard();
  }

  /** Stops every stream and removes the temporary files. */
  private async discard(): Promise<void> {
    this.out.destroy();
    this.gzip?.destroy();
    this.gzipOut?.destroy();
    this.brotli?.destroy();
    this.brotliOut?.destroy();
    await removeQuietly(this.tmp);
    if (this.gzipTmp) await removeQuietly(this.gzipTmp);
    if (this.brotliTmp) await removeQuietly(this.brotliTmp);
  }
}

/** Publishes a whole small file (index.json, a brand page) atomically. */
export async function publishFile(
  finalPath: string,
  content: string | Buffer,
  options: AtomicFileOptions = {},
): Promise<PublishResult> {
  const file = new AtomicFile(finalPath, options);
  try {
    await file.write(content);
    return await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
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
