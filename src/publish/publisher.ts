/**
 * The one output sink of everything agentshelf publishes as files: the feeds, the discovery
 * registry (pages, brand JSON, ACP feeds, serving rules) and the report files. A stage writes
 * each file through a Publisher under a key relative to the publisher's root (`v1/index.json`,
 * `feed_x.json`), in whole or as a stream, and ends a batch with `commit()`, which lists what
 * the batch changed: where a CDN purge or an object-store manifest hooks in.
 *
 * Implementations: FsPublisher (src/publish/fs.ts: temporary name + rename, compressed
 * siblings, unchanged content left alone) and MemoryPublisher (src/publish/memory.ts, for
 * tests). An object-storage target is a third beside them: the key, the content type and the
 * batch's list of changed keys are what it needs, and every call carries them.
 */

export interface PublishFileOptions {
  /** The MIME type of the file, for targets that store one with it (object storage). */
  contentType?: string;
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
  /** Flush the content to stable storage before it replaces the old file (report files). */
  durable?: boolean;
  /**
   * Also compute the MD5 of the file and the digests of its compressed siblings while they
   * are written (an object-storage manifest needs them; nobody else pays for them).
   */
  digests?: boolean;
  /**
   * Write the file from a thread of its own (publish/off-thread-file.ts): for large files
   * whose content the main thread builds (feeds), so hashing, writing and compressing run
   * beside it (the main thread still encodes the text). Honoured by the filesystem publisher; the file's worker costs a few
   * milliseconds to start, so small files are better written inline.
   */
  offThread?: boolean;
}

/** The digests of one published file or compressed sibling. */
export interface FileDigests {
  bytes: number;
  md5: string;
  sha256: string;
}

export interface PublishResult {
  /** false when the new content equals the published file: nothing was replaced. */
  changed: boolean;
  /** Hex SHA-256 of the content (a strong ETag source). */
  sha256: string;
  bytes: number;
  /** The file's key, relative to the publisher's root. */
  path: string;
  /** Hex MD5 of the content, when `digests` was asked and the file changed. */
  md5?: string;
  /** The compressed siblings written with a changed file, when `digests` was asked. */
  siblings?: ({ suffix: '.gz' | '.br' } & FileDigests)[];
}

/**
 * A file being written: chunks go in with backpressure (`write` returns a promise only when
 * a buffer is full), `commit()` puts the whole file in place at once (readers see the old
 * file or the new one, never a part), `abort()` drops it and leaves the published file as it was.
 */
export interface OpenFile {
  write(chunk: string | Buffer): Promise<void> | undefined;
  commit(): Promise<PublishResult>;
  abort(): Promise<void>;
}

/** What a batch changed: keys written with new content, keys removed. */
export interface PublishedChanges {
  written: string[];
  removed: string[];
}

export interface Publisher {
  /** Starts a file to stream into; nothing is visible before its `commit()`. */
  open(key: string, options?: PublishFileOptions): OpenFile;
  /** Writes a whole file (or a stream of chunks) and puts it in place. */
  write(
    key: string,
    data: string | Buffer | AsyncIterable<string | Buffer>,
    options?: PublishFileOptions,
  ): Promise<PublishResult>;
  /** The content of a published file, or undefined when there is none. */
  read(key: string): Promise<Buffer | undefined>;
  /** Whether a file is published under the key. */
  exists(key: string): Promise<boolean>;
  /** The names of the files directly under a key prefix (a directory), not its subdirectories. */
  list(dir: string): Promise<string[]>;
  /** Removes a file, with its compressed siblings, or (`recursive`) everything under a directory. */
  remove(key: string, options?: { recursive?: boolean }): Promise<void>;
  /** Ends a batch: what it wrote and removed since the last commit. */
  commit(): Promise<PublishedChanges>;
}

/** Writes a whole file through `file`, aborting it on failure. */
export async function writeWhole(
  file: OpenFile,
  data: string | Buffer | AsyncIterable<string | Buffer>,
): Promise<PublishResult> {
  try {
    if (typeof data === 'string' || Buffer.isBuffer(data)) {
      const wait = file.write(data);
      if (wait) await wait;
    } else {
      for await (const chunk of data) {
        const wait = file.write(chunk);
        if (wait) await wait;
      }
    }
    return await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
}
