/**
 * The thread of an off-thread file (off-thread-file.ts): an AtomicFile of its own, fed the
 * buffers the main thread gathers. The hashes, the file and compression streams and their
 * callbacks run here, so the thread that maps and formats a feed only builds and encodes its
 * text. Messages are handled one at a time, in order; each write is answered once AtomicFile
 * has taken it (the answer is what the main thread's backpressure waits for).
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { AtomicFile, type AtomicFileOptions, type PublishResult } from './fs.js';
import { WRITE_BYTES } from './gather.js';

export interface FileWorkerData {
  /** Marks the thread as a file writer (the module is also imported for its types). */
  fileWorker: true;
  path: string;
  options: AtomicFileOptions;
}

export type FileRequest =
  /** Bytes, in order: a Buffer sent, a Uint8Array received (structured clone). */
  { type: 'write'; chunk: Uint8Array } | { type: 'commit' } | { type: 'abort' };

export type FileReply =
  /** A write taken: `size` is its bytes. */
  | { type: 'written'; size: number }
  /** A buffer of WRITE_BYTES the file is done with, given back whole to gather into again. */
  | { type: 'spare'; chunk: Uint8Array }
  | { type: 'committed'; result: PublishResult }
  | { type: 'aborted' }
  /** The first failure; every later request is answered by it again. */
  | { type: 'failed'; error: Error; code: string | undefined };

function runWorker(port: NonNullable<typeof parentPort>, data: FileWorkerData): void {
  const reply = (message: FileReply) => port.postMessage(message);
  // Each buffer the streams are done with goes back to the main thread, which gathers into it
  // again: a thread that allocates little else would collect them rarely (V8 counts them as
  // external memory, 64 MB before it collects), and held them all until then.
  const file = new AtomicFile(data.path, data.options, (written) => {
    if (written.byteOffset !== 0 || written.buffer.byteLength !== WRITE_BYTES) return;
    const whole = new Uint8Array(written.buffer);
    port.postMessage({ type: 'spare', chunk: whole } satisfies FileReply, [
      whole.buffer as ArrayBuffer,
    ]);
  });
  let failure: Error | undefined;
  // An error crosses threads as its name, message and stack: its code (EFBIG, ENOSPC...) is
  // carried beside it.
  const fail = (err: Error) =>
    reply({ type: 'failed', error: err, code: (err as NodeJS.ErrnoException).code });

  async function handle(request: FileRequest): Promise<void> {
    if (failure) {
      // A failed file is only ever aborted: its temporaries go, nothing is published.
      if (request.type === 'abort') {
        await file.abort();
        reply({ type: 'aborted' });
      } else fail(failure);
      return;
    }
    switch (request.type) {
      case 'write': {
        const chunk = request.chunk;
        // Its size first: once the streams are done with it the buffer goes back to the main
        // thread (detached here, length 0), which can be before the wait below is over.
        const size = chunk.byteLength;
        const wait = file.write(Buffer.from(chunk.buffer, chunk.byteOffset, size));
        if (wait) await wait;
        reply({ type: 'written', size });
        return;
      }
      case 'commit':
        reply({ type: 'committed', result: await file.commit() });
        return;
      case 'abort':
        await file.abort();
        reply({ type: 'aborted' });
        return;
    }
  }

  let queue = Promise.resolve();
  port.on('message', (request: FileRequest) => {
    queue = queue.then(() =>
      handle(request).catch((err: unknown) => {
        failure ??= err instanceof Error ? err : new Error(String(err));
        fail(failure);
      }),
    );
  });
}

if (!isMainThread && parentPort && (workerData as Partial<FileWorkerData> | null)?.fileWorker) {
  runWorker(parentPort, workerData as FileWorkerData);
}
