import type { Logger } from 'pino';
import {
  beatWorker,
  deleteWorkers,
  listLiveWorkerIds,
  purgeExpiredWorkers,
} from '../../db/queries/workers.js';
import type { Db } from '../../db/store.js';
import { newOwnerToken, ownerIsGone, releaseOwnerToken } from '../../runtime/owner.js';
import { PollingWorker } from '../../runtime/polling-worker.js';

/** The longest wait between heartbeats, whatever the time to live. */
const MAX_BEAT_MS = 1_000;
/** Rows of workers that expired this long ago are removed (by any worker's heartbeat). */
const PURGE_AFTER_MS = 60 * 60 * 1000;
/** Expired rows are looked for at the first heartbeat and every this many after. */
const PURGE_EVERY_BEATS = 600;

export interface WorkerRegistryOptions {
  db: Db;
  logger: Logger;
  now: () => Date;
  /**
   * How long a worker counts as alive after its last heartbeat (`WEBHOOK_LEASE_MS`: a worker
   * that stops beating is presumed dead as its leases lapse). Heartbeats come every third of
   * it, at most every second.
   */
  ttlMs: number;
}

/** This process's share of work any live process could take (a WorkerRegistry, in serve). */
export interface WorkShare {
  /** The keys (endpoint ids, integration ids) that fall to this process. */
  share(keys: readonly string[]): Set<string>;
}

/**
 * Splits `keys` between `members` (sorted worker ids, `self` among them) and returns the keys
 * that fall to `self`: the keys in order, dealt round the members in order, so each member
 * gets an equal share (one more for some when they do not divide) and every key exactly one
 * member, the same on every process that sees the same keys and members.
 */
export function shareOf(
  keys: readonly string[],
  members: readonly string[],
  self: string,
): Set<string> {
  const index = members.indexOf(self);
  if (index < 0 || members.length <= 1) return new Set(keys);
  const sorted = [...keys].sort();
  return new Set(sorted.filter((_, i) => i % members.length === index));
}

/**
 * This process's place among the live workers on one store (issue 25: fair sharing of work
 * between processes). It keeps a row of its own in `workers` (a heartbeat) and reads the
 * others', so the background work that every `serve` could do (each webhook endpoint's lane,
 * each integration's scheduled sync) is split between the processes alive, by `share()`,
 * instead of going to whichever process takes it first.
 *
 * The split decides who tries, never who may: webhook deliveries are still sent only under
 * their lease and syncs still start only once per integration, so two processes that see the
 * members differently for a moment (one has not read the other's first heartbeat yet) at worst
 * both try, or neither tries until the next heartbeat.
 *
 * A worker that stops deletes its row; one killed is no longer counted once its row expires,
 * or at once by a process on the same host, which sees its pid gone.
 */
export class WorkerRegistry implements WorkShare {
  readonly id = newOwnerToken();
  private members: string[] = [this.id];
  private readonly poller: PollingWorker;
  private readonly beatMs: number;
  private beats = 0;

  constructor(private readonly options: WorkerRegistryOptions) {
    this.beatMs = Math.max(50, Math.min(MAX_BEAT_MS, Math.floor(options.ttlMs / 3)));
    this.poller = new PollingWorker({
      tick: () => this.beat(),
      intervalMs: this.beatMs,
      onError: (err) =>
        options.logger.warn({ err }, 'worker registry: heartbeat failed; sharing as last read'),
    });
  }

  /** Writes the first heartbeat (so the split is known before any work starts), then beats. */
  async start(): Promise<void> {
    try {
      await this.beat();
    } catch (err) {
      this.options.logger.warn({ err }, 'worker registry: first heartbeat failed; retrying');
    }
    this.poller.start(this.beatMs);
  }

  /** Stops beating and removes this worker's row: the others take its share at their next beat. */
  async stop(): Promise<void> {
    await this.poller.stop();
    try {
      await deleteWorkers(this.options.db, [this.id]);
    } catch (err) {
      this.options.logger.warn({ err }, 'worker registry: could not remove its row; it expires');
    }
    releaseOwnerToken(this.id);
  }

  /** The live workers as last read (this one always among them), by id. */
  live(): string[] {
    return this.members.filter((id) => id === this.id || !ownerIsGone(id));
  }

  /** The keys (endpoint ids, integration ids) that fall to this worker (see shareOf). */
  share(keys: readonly string[]): Set<string> {
    return shareOf(keys, this.live(), this.id);
  }

  private async beat(): Promise<void> {
    const { db, now, ttlMs } = this.options;
    const at = now();
    const expires = new Date(at.getTime() + ttlMs).toISOString();
    await beatWorker(db, this.id, at.toISOString(), expires);
    const ids = await listLiveWorkerIds(db, at.toISOString());
    // A process on this host that is gone: its row goes now, not when it expires.
    const gone = ids.filter((id) => id !== this.id && ownerIsGone(id));
    if (gone.length > 0) await deleteWorkers(db, gone);
    if (this.beats++ % PURGE_EVERY_BEATS === 0) {
      await purgeExpiredWorkers(db, new Date(at.getTime() - PURGE_AFTER_MS).toISOString());
    }
    const members = ids.filter((id) => !gone.includes(id));
    if (!members.includes(this.id)) members.push(this.id);
    members.sort();
    if (members.join() !== this.members.join()) {
      this.options.logger.info({ worker: this.id, workers: members }, 'live workers changed');
    }
    this.members = members;
  }
}
