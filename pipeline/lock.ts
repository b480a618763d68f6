import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  claimLock,
  deleteLockWaiter,
  insertLockWaiter,
  releaseLock,
  selectLock,
  selectLockWaitersBefore,
  touchLock,
  touchLockWaiter,
} from '../src/db/queries/pipeline-lock.js';
import type { Db } from '../src/db/store.js';
import { randomBase62 } from '../src/ids.js';
import { processIsGone } from '../src/runtime/process.js';

/** A holder or waiter that has not written a heartbeat for this long is taken to be gone. */
export const LOCK_STALE_MS = 60_000;
const HEARTBEAT_MS = 5_000;
const POLL_MS = 200;
const LOCK = 'pipeline';

/**
 * Tokens this process holds or waits with. A row with our pid but a token not in here is a
 * past incarnation of this pid (containers restart as pid 1), so it is gone.
 */
const liveHere = new Set<string>();

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

interface Party {
  token: string | null;
  pid: number | null;
  hostname: string | null;
  heartbeat_ms: number | null;
}

/**
 * Whether a holder or waiter is gone: killed (its pid no longer exists on this host), a past
 * incarnation of this pid, or silent for longer than staleMs (another host, a hung process).
 */
function isGone(party: Party, staleMs: number): boolean {
  if (party.heartbeat_ms === null || Date.now() - party.heartbeat_ms > staleMs) return true;
  if (party.pid === null || party.hostname !== os.hostname()) return false;
  if (party.pid === process.pid) return !liveHere.has(party.token ?? '');
  return processIsGone(party.pid);
}

/** Whether a live waiter queued before `ticket`; forgets the waiters that are gone. */
async function hasLiveWaiterBefore(db: Db, ticket: number, staleMs: number): Promise<boolean> {
  const ahead = await selectLockWaitersBefore(db, ticket);
  for (const waiter of ahead) {
    if (!isGone(waiter, staleMs)) return true;
    await deleteLockWaiter(db, waiter.ticket);
  }
  return false;
}

/**
 * Takes the pipeline lock: one row in the store, claimed with a compare-and-set UPDATE, so two
 * runs never overlap, in one process or across processes sharing the store. Waiters queue by
 * ticket, so a process that runs often (serve) cannot starve a waiting `build`. A holder or
 * waiter that was killed cannot block: it is passed over as soon as its pid is gone.
 * Waits up to `waitMs` for live holders, then throws PipelineBusyError.
 */
export async function acquirePipelineLock(
  db: Db,
  options: AcquireOptions = {},
): Promise<PipelineLock> {
  const token = randomBase62(20);
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const deadline = Date.now() + (options.waitMs ?? 0);
  liveHere.add(token);
  let acquired = false;
  const ticket = await insertLockWaiter(db, {
    token,
    pid: process.pid,
    hostname: os.hostname(),
    heartbeat_ms: Date.now(),
  });
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const row = await selectLock(db, LOCK);
      const free = row.holder === null || isGone({ ...row, token: row.holder }, staleMs);
      if (free && !(await hasLiveWaiterBefore(db, ticket, staleMs))) {
        const claimed = await claimLock(db, LOCK, row.holder, {
          token,
          pid: process.pid,
          hostname: os.hostname(),
          acquired_at: new Date().toISOString(),
          heartbeat_ms: Date.now(),
        });
        if (claimed) {
          acquired = true;
          return holdLock(db, token);
        }
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
      await touchLockWaiter(db, ticket, Date.now());
      await sleep(Math.min(POLL_MS, left), undefined, { signal: options.signal });
    }
  } finally {
    if (!acquired) liveHere.delete(token);
    await deleteLockWaiter(db, ticket);
  }
}

/**
 * The live holder of the pipeline lock, or undefined when the lock is free or its holder is
 * gone (killed, or silent for longer than staleMs). Tells a sweep of stale temporaries which
 * files a running build may still be writing.
 */
export async function liveLockHolder(
  db: Db,
  staleMs = LOCK_STALE_MS,
): Promise<{ pid: number | null; hostname: string | null } | undefined> {
  const row = await selectLock(db, LOCK);
  if (row.holder === null || isGone({ ...row, token: row.holder }, staleMs)) return undefined;
  return { pid: row.pid, hostname: row.hostname };
}

function holdLock(db: Db, token: string): PipelineLock {
  let lost = false;
  const beat = async () => {
    try {
      if (!(await touchLock(db, LOCK, token, Date.now()))) lost = true;
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
      liveHere.delete(token);
      await releaseLock(db, LOCK, token);
    },
  };
}
