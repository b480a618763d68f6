import type { Logger } from 'pino';
import { releaseLeases, renewLeases, type Lease } from '../../db/queries/webhook-deliveries.js';
import type { Db } from '../../db/store.js';
import { newOwnerToken, releaseOwnerToken } from '../../runtime/owner.js';

/**
 * The leases one delivery worker holds on webhook deliveries (several processes on one
 * store, issue 14): its owner token, the deliveries it has claimed, and a timer that renews
 * them while it works, so a lease only lapses when its process stops (killed, hung, cut off).
 */
export class LeaseKeeper {
  readonly owner = newOwnerToken();
  /** Delivery seqs this worker has claimed and not yet recorded. */
  readonly held = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
    private readonly now: () => Date,
    private readonly logger: Logger,
  ) {}

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
    releaseOwnerToken(this.owner);
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
