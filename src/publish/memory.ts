import { createHash } from 'node:crypto';
import {
  writeWhole,
  type OpenFile,
  type PublishedChanges,
  type PublishFileOptions,
  type PublishResult,
  type Publisher,
} from './publisher.js';

export interface MemoryFile {
  content: Buffer;
  contentType: string | undefined;
  sha256: string;
}

/**
 * A Publisher that keeps the files in a map (for tests): the same contract as FsPublisher
 * (nothing visible before a file's commit, unchanged content not replaced, a batch's changes
 * listed by `commit()`), without compressed siblings: those are the filesystem's way of
 * serving encodings.
 */
export class MemoryPublisher implements Publisher {
  readonly files = new Map<string, MemoryFile>();
  private written: string[] = [];
  private removed: string[] = [];

  open(key: string, options: PublishFileOptions = {}): OpenFile {
    const chunks: Buffer[] = [];
    const hash = createHash('sha256');
    let bytes = 0;
    let done = false;
    return {
      write: (chunk) => {
        if (done) return Promise.reject(new Error(`${key} was already committed or aborted`));
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        hash.update(buf);
        bytes += buf.length;
        chunks.push(buf);
        return undefined;
      },
      commit: async (): Promise<PublishResult> => {
        if (done) throw new Error(`${key} was already committed or aborted`);
        done = true;
        const sha256 = hash.digest('hex');
        const changed = this.files.get(key)?.sha256 !== sha256;
        if (changed) {
          this.files.set(key, {
            content: Buffer.concat(chunks, bytes),
            contentType: options.contentType,
            sha256,
          });
          this.written.push(key);
        }
        return { changed, sha256, bytes, path: key };
      },
      abort: async () => {
        done = true;
      },
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
    return this.files.get(key)?.content;
  }

  async exists(key: string): Promise<boolean> {
    return this.files.has(key);
  }

  async list(dir: string): Promise<string[]> {
    const prefix = dir === '' || dir === '.' ? '' : `${dir.replace(/\/$/, '')}/`;
    return [...this.files.keys()]
      .filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('/'))
      .map((k) => k.slice(prefix.length));
  }

  async remove(key: string, options: { recursive?: boolean } = {}): Promise<void> {
    const prefix = `${key.replace(/\/$/, '')}/`;
    for (const k of [...this.files.keys()]) {
      if (k === key || (options.recursive && k.startsWith(prefix))) {
        this.files.delete(k);
        this.removed.push(k);
      }
    }
  }

  async commit(): Promise<PublishedChanges> {
    const changes = { written: this.written, removed: this.removed };
    this.written = [];
    this.removed = [];
    return changes;
  }

  /** A file's text (tests read what a stage published). */
  text(key: string): string | undefined {
    return this.files.get(key)?.content.toString('utf8');
  }
}
