/**
 * An AtomicFile written by a thread of its own (file-worker.ts), for the large files the main
 * thread builds page by page (feeds): the main thread encodes its text into buffers of 1 MiB
 * (gather.ts) and hands each filled one over whole (transferred, not copied), while the
 * file's thread hashes (SHA-256 of a 100,000-product ACP feed: about 80 ms of the main
 * thread's CPU), writes and compresses them. It is the same AtomicFile with the same
 * guarantees: nothing visible before commit, unchanged content left as it was, a failure
 * surfaced by the next write or the commit, temporaries removed on abort.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../runtime/worker.js';
import type { AtomicFileOptions } from './fs.js';
import { Gatherer } from './gather.js';
import type { FileReply, FileRequest, FileWorkerData } from './file-worker.js';
import type { OpenFile, PublishResult } from './publisher.js';

/**
 * Bytes handed over and not yet taken by the file's thread before a write waits: a few
 * gathered buffers, about what the streams' own buffers hold (fs.ts STREAM_BUFFER).
 */
const IN_FLIGHT = 4 * 1024 * 1024;

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (err: Error) => void;
}

export class OffThreadFile implements OpenFile {
  private readonly worker: Worker;
  private readonly gathered = new Gatherer();
  private inFlight = 0;
  /** The write waiting for the thread to take some of what is in flight. */
  private drain: Waiter<void> | undefined;
  /** The commit or abort waiting for its answer. */
  private ending: Waiter<PublishResult | undefined> | undefined;
  private failure: Error | undefined;
  private done = false;
  private exited = false;

  constructor(finalPath: string, options: AtomicFileOptions = {}) {
    const data: FileWorkerData = { fileWorker: true, path: finalPath, options };
    // From build/ the compiled file-worker.js; in the one-file binary the bundle that
    // scripts/dist.mjs names.
    this.worker = startWorker('file-worker.cjs', new URL('./file-worker.js', import.meta.url), {
      workerData: data,
    });
    this.worker.on('message', (reply: FileReply) => this.onReply(reply));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      this.exited = true;
      if (this.ending || this.drain || !this.done)
        this.fail(new Error(`the file writer thread of ${finalPath} exited (${code})`));
    });
  }

  write(chunk: string | Buffer): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    for (const data of this.gathered.add(chunk)) this.send(data, data !== chunk);
    if (this.inFlight <= IN_FLIGHT) return undefined;
    return new Promise<void>((resolve, reject) => {
      this.drain = { resolve, reject };
    });
  }

  async commit(): Promise<PublishResult> {
    if (this.done) throw new Error('the file was already committed or aborted');
    if (this.failure) {
      // Nothing is published after a failure: the temporaries go, as AtomicFile.commit does.
      await this.end({ type: 'abort' }).catch(() => undefined);
      throw this.failure;
    }
    const rest = this.gathered.take();
    if (rest) this.send(rest, true);
    const result = await this.end({ type: 'commit' });
    return result!;
  }

  async abort(): Promise<void> {
    if (this.done) return;
    await this.end({ type: 'abort' }).catch(() => undefined);
  }

  private async end(request: FileRequest): Promise<PublishResult | undefined> {
    this.done = true;
    try {
      // A thread that is gone answers nothing.
      if (this.exited) {
        if (this.failure) throw this.failure;
        return undefined;
      }
      const answer = new Promise<PublishResult | undefined>((resolve, reject) => {
        this.ending = { resolve, reject };
      });
      this.worker.postMessage(request);
      return await answer;
    } finally {
      this.ending = undefined;
      await this.worker.terminate();
    }
  }

  /**
   * Hands bytes to the thread: a buffer of our own is transferred (its memory moves, this
   * side can no longer read it), a caller's Buffer copied.
   */
  private send(data: Buffer, own: boolean): void {
    this.inFlight += data.length;
    const request: FileRequest = { type: 'write', chunk: data };
    this.worker.postMessage(request, own ? [data.buffer as ArrayBuffer] : []);
  }

  private onReply(reply: FileReply): void {
    switch (reply.type) {
      case 'written':
        this.inFlight -= reply.size;
        if (this.drain && this.inFlight <= IN_FLIGHT / 2) {
          const drain = this.drain;
          this.drain = undefined;
          drain.resolve();
        }
        return;
      case 'spare':
        this.gathered.recycle(
          Buffer.from(reply.chunk.buffer, reply.chunk.byteOffset, reply.chunk.byteLength),
        );
        return;
      case 'committed':
        this.ending?.resolve(reply.result);
        return;
      case 'aborted':
        this.ending?.resolve(undefined);
        return;
      case 'failed':
        // The first failure settles what waits; the thread answers every later request with
        // it again, and an abort under way is settled by its own answer (its temporaries
        // removed), not by one of those.
        if (this.failure) return;
        if (reply.code !== undefined) (reply.error as NodeJS.ErrnoException).code = reply.code;
        this.fail(reply.error);
        return;
    }
  }

  /** Records the first failure and rejects whatever waits (the thread failing or gone, too). */
  private fail(err: Error): void {
    this.failure ??= err;
    const { drain, ending } = this;
    this.drain = undefined;
    this.ending = undefined;
    drain?.reject(this.failure);
    ending?.reject(this.failure);
  }
}
