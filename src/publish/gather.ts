/**
 * Gathering a file's writes into large buffers (publish/fs.ts AtomicFile, and the main
 * thread's side of publish/off-thread-file.ts).
 */

/**
 * Writes are gathered to at least this size before the hash and the streams get them: each
 * stream write is a trip to the thread pool and a callback on the main thread (30 KB gzip
 * writes cost the main thread 5x more than 256 KB ones; a 100,000-product feed's 400 page
 * writes cost it 250 ms more in stream callbacks than 1 MB ones).
 */
export const WRITE_BYTES = 1024 * 1024;
/** A gathered buffer with less room than this left is given out (its tail would be tiny). */
const MIN_FREE = 4 * 1024;
const ENCODER = new TextEncoder();
/** Spare buffers a Gatherer keeps: what a file's thread holds in flight (off-thread-file.ts). */
const MAX_SPARES = 8;

/**
 * Chunks gathered into buffers of WRITE_BYTES before they go on: text is encoded straight into
 * the buffer (no Buffer per write, no copy to join them), a small Buffer copied in, a large
 * one handed on as it is. A filled buffer is given out and not touched again until it is given
 * back (`recycle`), if ever; a spare or a new one takes its place.
 */
export class Gatherer {
  private pending: Buffer | undefined;
  private pendingBytes = 0;
  /** Buffers given back (recycle) to gather into again, instead of new ones. */
  private readonly spares: Buffer[] = [];

  /**
   * Gives back the memory of a buffer given out, once whoever took it is done with it: the
   * next buffers are gathered into it. Only whole buffers of WRITE_BYTES are kept, a few.
   */
  recycle(buffer: Buffer): void {
    if (buffer.length !== WRITE_BYTES || this.spares.length >= MAX_SPARES) return;
    this.spares.push(buffer);
  }

  private fresh(): Buffer {
    return this.spares.pop() ?? Buffer.allocUnsafeSlow(WRITE_BYTES);
  }

  /** Takes a chunk; answers the buffers it filled, in order (a caller's large Buffer too). */
  add(chunk: string | Buffer): Buffer[] {
    return typeof chunk === 'string' ? this.addText(chunk) : this.addBuffer(chunk);
  }

  /** What is gathered and not yet given out, if anything. */
  take(): Buffer | undefined {
    if (this.pendingBytes === 0 || !this.pending) return undefined;
    const data = this.pending.subarray(0, this.pendingBytes);
    this.pending = undefined;
    this.pendingBytes = 0;
    return data;
  }

  private addText(chunk: string): Buffer[] {
    let text = chunk;
    const full: Buffer[] = [];
    for (;;) {
      const buffer = (this.pending ??= this.fresh());
      const { read, written } = ENCODER.encodeInto(text, buffer.subarray(this.pendingBytes));
      this.pendingBytes += written;
      if (read === text.length) break;
      // The buffer is full (encodeInto never splits a character): give it out, go on in a new one.
      text = text.slice(read);
      this.takeInto(full);
    }
    if (this.pendingBytes >= WRITE_BYTES - MIN_FREE) this.takeInto(full);
    return full;
  }

  private addBuffer(chunk: Buffer): Buffer[] {
    const full: Buffer[] = [];
    if (this.pending && this.pendingBytes + chunk.length <= WRITE_BYTES) {
      chunk.copy(this.pending, this.pendingBytes);
      this.pendingBytes += chunk.length;
      if (this.pendingBytes >= WRITE_BYTES - MIN_FREE) this.takeInto(full);
    } else if (chunk.length < WRITE_BYTES / 4) {
      this.takeInto(full);
      this.pending = this.fresh();
      chunk.copy(this.pending, 0);
      this.pendingBytes = chunk.length;
    } else {
      this.takeInto(full);
      full.push(chunk);
    }
    return full;
  }

  private takeInto(full: Buffer[]): void {
    const data = this.take();
    if (data) full.push(data);
  }
}
