import os from 'node:os';
import type { Logger } from 'pino';
import { releaseLeases, renewLeases, type Lease } from '../../db/queries/webhook-deliveries.js';
import type { Db } from '../../db/store.js';
import { randomBase62 } from '../../ids.js';
import { processIsGone } from '../../runtime/process.js';

/** Owners (workers) alive in this process: one with our pid but not in here is a past one. */
const liveOwners = new Set<string>();

/**
 * Whether the worker that owns a lease is known to be gone: it ran on this host and its
 * process no longer exists (or is a past incarnation of our pid). A worker on another host
 * is only known gone when its lease lapses.
 */
export function leaseOwnerIsGone(owner: string): boolean {
  if (liveOwners.has(owner)) return false;
  const [host, pidText] = owner.split('/');
  const pid = Number(pidText);
  if (host !== os.hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  return pid === process.pid || processIsGone(pid);
}

/**
 * The leases one delivery worker holds on webhook deliveries (several processes on one
 * store, issue 14): its owner token, the deliveries it has claimed, and a timer that renews
 * them while it works, so a lease only lapses when its process stops (killed, hung, cut off).
 */
export class LeaseKeeper {
  readonly owner = `${os.hostname()}/${process.pid}/${randomBase62(10)}`;
  /** Delivery seqs this worker has claimed and not yet recorded. */
  readonly held = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
    private readonly now: () => Date,
    private readonly logger: Logger,
  ) {
    liveOwners.add(this.owner);
  }

  /** A lease from now for LEASE_MS; `gone` names a dead owner whose lease may be taken. */
  lease(gone?: string): Lease {
    const now = this.now();
    return {
      owner: this.owner,
      now: now.toISOString(),
      until: new Date(now.getTime() + this.leaseMs).toISOString(),
      gone,
    };
  }

  start(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing and gives back what is still held (attempts abandoned by a stop). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    try {
      await releaseLeases(this.db, this.owner, [...this.held]);
    } catch (err) {
      this.logger.warn({ err }, 'webhook worker: could not give back its leases; they lapse');
    }
    this.held.clear();
    liveOwners.delete(this.owner);
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    try {
      await renewLeases(this.db, this.owner, [...this.held], this.lease().until);
    } catch (err) {
      this.logger.warn({ err }, 'webhook worker: renewing leases failed; retrying');
    }
  }
}
