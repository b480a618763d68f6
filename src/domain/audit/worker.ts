/**
 * The audit log's writer thread. It owns a connection of its own and does the inserts and the
 * retention sweep, so the request thread only hands it batches of entries. Messages are
 * handled one at a time, in order: when it answers `flush`, every batch sent before is in the
 * store (or kept for a retry, if the store refused it).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openStoreOfDialect } from '../../db/open-dialect.js';
import type { StoreLocation } from '../../db/store.js';
import { storedTimestamp } from '../../db/timestamps.js';
import { nodeVersionRefusal } from '../../runtime/node-version.js';
import { insertAuditValues, sweepAuditLog, type AuditValues } from './writes.js';

/** One entry as the request thread sends it: time in ms since the epoch first. */
export type AuditTuple = [
  receivedAtMs: number,
  keyId: string,
  method: string,
  path: string,
  status: number,
  requestId: string,
  clientIp: string | null,
];

export interface AuditWorkerData {
  /** Marks the thread as the audit writer (the module is also imported for its types). */
  auditWorker: true;
  location: StoreLocation;
  /** Commit as soon as this many entries wait (else at the next tick or flush). */
  flushRows: number;
  /** While the store refuses writes, keep at most this many entries, dropping the oldest. */
  maxQueued: number;
}

export type AuditRequest =
  /**
   * Entries to store, as the JSON of an AuditTuple[]; `write` asks for a transaction now, else
   * they wait for flushRows. JSON, because entries wait here up to a second: one string per
   * batch is nothing for the garbage collector, thousands of small arrays are not.
   */
  | { type: 'rows'; json: string; count: number; write: boolean }
  | { type: 'flush'; id: number }
  | { type: 'sweep'; id: number; before: string }
  | { type: 'close'; id: number };

export type AuditReply =
  | { type: 'done'; id: number; value: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'log'; level: 'warn' | 'error'; message: string; data: Record<string, unknown> }
  | { type: 'ready' };

/** The tuple becomes the row's values in place: only its time changes form. */
function toValues(t: AuditTuple): AuditValues {
  const values = t as unknown as AuditValues;
  values[0] = storedTimestamp(t[0]);
  return values;
}

async function runWorker(): Promise<void> {
  // The process that starts this thread has checked already (src/main.ts); this is for any
  // other that would. Before the store opens: its native addon crashes an older Node.
  const refusal = nodeVersionRefusal();
  if (refusal) throw new Error(refusal);
  const port = parentPort!;
  const { location, flushRows, maxQueued } = workerData as AuditWorkerData;
  const store = await openStoreOfDialect(location);
  // Received batches wait as JSON; `failed` holds parsed entries the store refused.
  let received: string[] = [];
  let receivedCount = 0;
  let queue: AuditValues[] = [];
  let dropped = 0;
  const waiting = () => queue.length + receivedCount;
  const reply = (message: AuditReply) => port.postMessage(message);

  async function writeQueue(): Promise<void> {
    for (const json of received) {
      for (const t of JSON.parse(json) as AuditTuple[]) queue.push(toValues(t));
    }
    received = [];
    receivedCount = 0;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    try {
      await insertAuditValues(store.db, batch);
      if (dropped > 0) {
        reply({
          type: 'log',
          level: 'warn',
          message: 'audit log: entries were dropped while the store refused writes',
          data: { dropped },
        });
        dropped = 0;
      }
    } catch (err) {
      queue = batch.concat(queue);
      const over = queue.length - maxQueued;
      if (over > 0) {
        queue.splice(0, over);
        dropped += over;
      }
      reply({
        type: 'log',
        level: 'error',
        message: 'audit log: could not write entries; will retry',
        data: { err: String(err), queued: queue.length },
      });
    }
  }

  async function handle(message: AuditRequest): Promise<void> {
    switch (message.type) {
      case 'rows':
        if (message.count > 0) {
          received.push(message.json);
          receivedCount += message.count;
        }
        if (message.write || waiting() >= flushRows) await writeQueue();
        return;
      case 'flush':
        await writeQueue();
        reply({ type: 'done', id: message.id, value: waiting() });
        return;
      case 'sweep':
        try {
          const n = await sweepAuditLog(store.db, new Date(message.before));
          reply({ type: 'done', id: message.id, value: n });
        } catch (err) {
          reply({ type: 'failed', id: message.id, message: String(err) });
        }
        return;
      case 'close':
        await writeQueue();
        await store.close();
        reply({ type: 'done', id: message.id, value: waiting() });
        port.close();
        return;
    }
  }

  reply({ type: 'ready' });
  let tail: Promise<void> = Promise.resolve();
  port.on('message', (message: AuditRequest) => {
    tail = tail.then(() =>
      handle(message).catch((err: unknown) => {
        // Whoever waits on this message hears of the failure; the thread carries on.
        if ('id' in message) reply({ type: 'failed', id: message.id, message: String(err) });
        else
          reply({ type: 'log', level: 'error', message: 'audit log', data: { err: String(err) } });
      }),
    );
  });
}

if (parentPort && (workerData as Partial<AuditWorkerData> | null)?.auditWorker) {
  // A failed start (the store cannot be opened) is thrown in the thread: the writer hears it
  // as the thread's error, as it did when opening was synchronous.
  runWorker().catch((err: unknown) =>
    setImmediate(() => {
      throw err;
    }),
  );
}
