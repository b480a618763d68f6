import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../src/db/database.js';
import type { Selectable } from 'kysely';
import type { PipelineLockTable } from '../src/db/schema.js';
import { randomBase62 } from '../src/ids.js';

/** A holder that has not written a heartbeat for this long is taken to be gone. */
export const LOCK_STALE_MS = 60_000;
const HEARTBEAT_MS = 5_000;
const POLL_MS = 200;
const LOCK = 'pipeline';

/** Tokens this process holds now: a row with our pid but another token is a past incarnation. */
const heldHere = new Set<string>();

export interface LockHolder {
  pid: number | null;
  hostname: string | null;
  acquiredAt: string | null;
}

/** Another run held the lock for longer than the caller would wait. */
export class PipelineBusyError extends Error {
  constructor(readonly holder: LockHolder) {
    super(
      `another pipeline run holds the lock (pid ${holder.pid ?? '?'} on ${holder.hostname ?? '?'}, since ${holder.acquiredAt ?? '?'})`,
    );
    this.name = 'PipelineBusyError';
  }
}

export interface PipelineLock {
  /** True once another process took the lock over (this holder's heartbeats had stopped). */
  readonly lost: boolean;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** How long to wait for a live holder, in ms (0: fail at once). */
  waitMs?: number;
  signal?: AbortSignal | undefined;
  staleMs?: number;
}

function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Whether a holder is gone: killed (its pid no longer exists on this host), a past
 * incarnation of this pid (containers restart as pid 1), or silent for longer than staleMs
 * (another host, or a hung process).
 */
function isAbandoned(row: Selectable<PipelineLockTable>, staleMs: number): boolean {
  if (row.heartbeat_ms === null || Date.now() - row.heartbeat_ms > staleMs) return true;
  if (row.pid === null || row.hostname !== os.hostname()) return false;
  if (row.pid === process.pid) return !heldHere.has(row.holder ?? '');
  return processIsGone(row.pid);
}

/**
 * Takes the pipeline lock: one row in the store, claimed with a compare-and-set UPDATE, so
 * two runs never overlap, in one process or across processes sharing the store. A holder
 * that was killed cannot block: its lock is taken over as soon as its pid is gone.
 * Waits up to `waitMs` for a live holder, then throws PipelineBusyError.
 */
export async function acquirePipelineLock(
  db: Db,
  options: AcquireOptions = {},
): Promise<PipelineLock> {
  const token = randomBase62(20);
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    options.signal?.throwIfAborted();
    const row = await db
      .selectFrom('pipeline_lock')
      .selectAll()
      .where('name', '=', LOCK)
      .executeTakeFirstOrThrow();
    if (row.holder === null || isAbandoned(row, staleMs)) {
      const claimed = await db
        .updateTable('pipeline_lock')
        .set({
          holder: token,
          pid: process.pid,
          hostname: os.hostname(),
          acquired_at: new Date().toISOString(),
          heartbeat_ms: Date.now(),
        })
        .where('name', '=', LOCK)
        .where((eb) =>
          row.holder === null ? eb('holder', 'is', null) : eb('holder', '=', row.holder),
        )
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1) return holdLock(db, token);
      continue; // another process claimed it between our read and our write
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new PipelineBusyError({
        pid: row.pid,
        hostname: row.hostname,
        acquiredAt: row.acquired_at,
      });
    }
    await sleep(Math.min(POLL_MS, left), undefined, { signal: options.signal });
  }
}

function holdLock(db: Db, token: string): PipelineLock {
  heldHere.add(token);
  let lost = false;
  const beat = async () => {
    try {
      const res = await db
        .updateTable('pipeline_lock')
        .set({ heartbeat_ms: Date.now() })
        .where('name', '=', LOCK)
        .where('holder', '=', token)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) lost = true;
    } catch {
      // The store is closing; release() will tell.
    }
  };
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    async release() {
      clearInterval(timer);
      heldHere.delete(token);
      await db
        .updateTable('pipeline_lock')
        .set({ holder: null, pid: null, hostname: null, acquired_at: null, heartbeat_ms: null })
        .where('name', '=', LOCK)
        .where('holder', '=', token)
        .execute();
    },
  };
}
