import { purgeSettledDeliveries } from '../../db/queries/webhook-deliveries.js';
import type { WebhookRow } from '../../db/schema.js';
import type { DeliveryContext } from './attempt.js';
import { retryDeliveryNow, sendTestDelivery, type InFlight } from './manual.js';
import { AttemptRecorder, type ExpectedAttempt, type FinishedAttempt } from './record.js';
import { DeliveryLane, type LaneHost } from './lane.js';
import { LeaseKeeper } from './lease.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import { fanOutEvents } from './outbox.js';
import type { WorkShare } from '../workers/registry.js';
import type { WebhookDelivery } from './schemas.js';

/**
 * Whether a lane's copy of an endpoint still holds: compared field by field, because two
 * changes within one millisecond leave updated_at as it was.
 */
function sameDeliverySettings(a: WebhookRow, b: WebhookRow): boolean {
  return (
    a.url === b.url &&
    a.secret === b.secret &&
    a.previous_secret === b.previous_secret &&
    a.previous_secret_expires_at === b.previous_secret_expires_at &&
    a.updated_at === b.updated_at
  );
}

/** Settled deliveries (and their attempts) are kept this long in the log. */
export const DELIVERY_RETENTION_DAYS = 30;
const PURGE_EVERY_MS = 60 * 60 * 1000;
/** Deliveries deleted per tick while a purge runs, so lanes keep their turn. */
const PURGE_CHUNK = 2_000;

export interface WebhookWorkerOptions {
  /** How often the outbox is read when nothing signals new events (default 200 ms). */
  pollMs?: number;
  /** Events read per fan-out transaction (default 500). */
  fanOutBatch?: number;
  /** The endpoints this process runs lanes for, among several (default: every endpoint). */
  workers?: WorkShare;
}

/**
 * The delivery worker that `serve` runs: it reads the outbox (the events table), queues a
 * delivery per event and endpoint, and runs one lane per active endpoint. Everything it
 * knows is in the store (cursors, queues, attempts), so a process killed at any moment
 * resumes where it stopped; a delivery whose answer was lost is sent again (at least once).
 *
 * Several processes may run a worker on one store (issue 14): fan-outs take turns (the
 * outbox lock), and a delivery is sent only by the worker holding its lease (see
 * DeliveryLane), so each goes out once per attempt, in order per endpoint; the deliveries of
 * a killed process go to another when their leases lapse (WEBHOOK_LEASE_MS), or at once
 * when the killed process ran on the same host. The endpoints are shared between the live
 * processes (issue 25, `workers`): each runs lanes for its share only, so two processes
 * deliver to different endpoints at once instead of one taking every endpoint's queue; an
 * endpoint whose share moves is handed over when the lane that had it has stopped and given
 * back its leases. A lane learns of deliveries another process queued from its endpoint's
 * event cursor, read at every pass.
 */
export class WebhookWorker {
  /** Delivery seqs with an attempt under way (lanes and manual retries). */
  readonly inFlight: InFlight = new Set();
  private readonly lanes = new Map<string, DeliveryLane>();
  /** Lanes stopping (their attempt under way finishing, their leases given back). */
  private readonly retiring = new Map<DeliveryLane, Promise<void>>();
  /** The endpoints this process delivers to, as last logged. */
  private mine = '';
  private readonly workers: WorkShare | undefined;
  private readonly abort = new AbortController();
  private readonly recorder: AttemptRecorder;
  private readonly leases: LeaseKeeper;
  private readonly fanOutBatch: number;
  private readonly poller: PollingWorker;
  private running = false;
  private stopping: Promise<void> | undefined;
  private lastPurge = 0;
  private purging = false;

  constructor(
    private readonly ctx: DeliveryContext,
    options: WebhookWorkerOptions = {},
  ) {
    this.recorder = new AttemptRecorder(ctx);
    this.leases = new LeaseKeeper(ctx.db, ctx.config.WEBHOOK_LEASE_MS, ctx.now, ctx.logger);
    this.fanOutBatch = options.fanOutBatch ?? 500;
    this.workers = options.workers;
    this.poller = new PollingWorker({
      tick: () => this.tick(),
      intervalMs: options.pollMs ?? 200,
      onError: (err) =>
        this.ctx.logger.error({ err }, 'webhook worker: reading the outbox failed; retrying'),
    });
  }

  start(): void {
    if (this.running || this.stopping) return;
    this.running = true;
    this.leases.start();
    this.poller.start();
  }

  /** Read the outbox and the endpoints now (after an event or an endpoint change). */
  nudge(): void {
    this.poller.nudge();
  }

  /** Sends a test event to an endpoint now and logs it as a delivery. */
  async sendTest(webhookId: string): Promise<WebhookDelivery> {
    try {
      return await sendTestDelivery(this.ctx, webhookId);
    } finally {
      this.nudge();
    }
  }

  /** Sends a logged delivery again now (see retryDeliveryNow). */
  async retryDelivery(webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    try {
      return await retryDeliveryNow(this.ctx, webhookId, deliveryId, this.inFlight, this.leases);
    } finally {
      this.lanes.get(webhookId)?.refresh();
      this.nudge();
    }
  }

  /**
   * Stops taking new attempts, lets those under way finish for up to `graceMs` (then aborts
   * them: they were not recorded and are sent again after a restart), and returns when every
   * lane has ended, so the store can be closed.
   */
  stop(graceMs: number): Promise<void> {
    return (this.stopping ??= (async () => {
      this.running = false;
      await this.poller.stop();
      for (const lane of this.lanes.values()) this.retire(lane);
      this.lanes.clear();
      const timer = setTimeout(() => this.abort.abort(), graceMs);
      await Promise.all(this.retiring.values());
      clearTimeout(timer);
      await this.leases.stop();
    })());
  }

  /** One pass: queue new events, match lanes to the active endpoints, purge old logs. */
  private async tick(): Promise<boolean> {
    const fanned = await fanOutEvents(this.ctx.db, this.fanOutBatch, this.ctx.now());
    // The outbox busy (a long writer in flight): the lanes as they are, and again next poll.
    if (!fanned) return false;
    const { webhooks, more } = fanned;
    this.syncLanes(webhooks);
    const now = this.ctx.now().getTime();
    if (this.purging || now - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now;
      const before = new Date(now - DELIVERY_RETENTION_DAYS * 24 * 60 * 60 * 1000);
      const purged = await purgeSettledDeliveries(this.ctx.db, before.toISOString(), PURGE_CHUNK);
      this.purging = purged === PURGE_CHUNK;
    }
    return more || this.purging;
  }

  private syncLanes(webhooks: WebhookRow[]): void {
    const shared = this.workers?.share(webhooks.map((w) => w.id));
    const ours = shared ? webhooks.filter((w) => shared.has(w.id)) : webhooks;
    const active = new Map(ours.map((w) => [w.id, w]));
    for (const [id, lane] of this.lanes) {
      if (!active.has(id)) {
        this.lanes.delete(id);
        this.retire(lane);
      }
    }
    const mine = [...active.keys()].sort().join();
    if (shared && mine !== this.mine) {
      this.ctx.logger.info(
        { webhooks: [...active.keys()].sort(), of: webhooks.length },
        'webhook endpoints this process delivers to',
      );
    }
    this.mine = mine;
    for (const webhook of ours) {
      const lane = this.lanes.get(webhook.id);
      if (!lane || lane.stopped) {
        if (lane) {
          this.lanes.delete(webhook.id);
          this.retire(lane);
        }
        // One lane an endpoint: a new one starts once the last has stopped (and given back
        // its leases), never beside it.
        if ([...this.retiring.keys()].some((l) => l.webhook.id === webhook.id)) continue;
        this.lanes.set(webhook.id, new DeliveryLane(this.laneHost(), webhook).start());
        continue;
      }
      if (!sameDeliverySettings(lane.webhook, webhook)) lane.update(webhook);
      // Our own fan-out or another process's may have queued deliveries for it.
      lane.feedTo(webhook.event_cursor);
    }
  }

  private laneHost(): LaneHost {
    return {
      ctx: this.ctx,
      inFlight: this.inFlight,
      signal: this.abort.signal,
      leases: this.leases,
      record: (attempt: FinishedAttempt, expected?: ExpectedAttempt) =>
        this.recorder.record(attempt, expected),
      expect: () => this.recorder.expect(),
      cancel: (expected: ExpectedAttempt) => this.recorder.cancel(expected),
    };
  }

  private retire(lane: DeliveryLane): void {
    lane.stop();
    this.retiring.set(
      lane,
      lane.done.finally(() => {
        this.retiring.delete(lane);
        // Its endpoint may have a lane to start (re-enabled, or its share back here).
        if (this.running) this.nudge();
      }),
    );
  }
}
