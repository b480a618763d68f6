import {
  claimQueuedDeliveries,
  listQueuedDeliveries,
  releaseLeases,
  type QueuedDelivery,
} from '../../db/queries/webhook-deliveries.js';
import type { DeliveryStatus, WebhookRow } from '../../db/schema.js';
import { nextAfterFailure, sendToEndpoint, type DeliveryContext } from './attempt.js';
import { ownerIsGone } from '../../runtime/owner.js';
import type { LeaseKeeper } from './lease.js';
import type { InFlight } from './manual.js';
import type { ExpectedAttempt, FinishedAttempt, Settled } from './record.js';
import { createEndpointAgents } from './sender.js';
import { buildDeliveryBody } from './signature.js';

/** Pending deliveries read per query: what a lane holds in memory, whatever the backlog. */
const QUEUE_BATCH = 100;
/** Pause after an unexpected error (the store busy, say) before reading the queue again. */
const ERROR_PAUSE_MS = 1_000;
/** An idle lane reads its queue this often even without a signal (a safety net). */
const IDLE_RECHECK_MS = 10_000;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Pause after a claim lost twice in a row (another worker is taking the same head). */
const CLAIM_RETRY_MS = 100;
/**
 * A head leased to another live worker is looked at again this often: the endpoint is ours
 * now (the workers' share moved), and the other gives its leases back when its lane stops.
 */
const HANDOVER_RECHECK_MS = 250;

export interface LaneHost {
  ctx: DeliveryContext;
  inFlight: InFlight;
  /** Records an attempt (batched with other lanes' attempts). */
  record: (attempt: FinishedAttempt, expected?: ExpectedAttempt) => Promise<Settled>;
  /** An attempt is being sent: its record follows (or cancel(), if it is not recorded). */
  expect: () => ExpectedAttempt;
  cancel: (expected: ExpectedAttempt) => void;
  /** Aborted when shutdown has waited long enough for attempts under way. */
  signal: AbortSignal;
  /** The worker's leases: a delivery is sent only by the worker that claimed it. */
  leases: LeaseKeeper;
}

/**
 * Delivers one endpoint's queue, strictly in event order: one attempt at a time, and a
 * failed delivery is retried on its schedule before any later one is sent. Each endpoint has
 * its own lane (and its own keep-alive connection), so a slow or dead endpoint only ever
 * delays itself.
 *
 * Several processes on one store share the endpoints (WebhookWorker), and whichever runs a
 * lane for an endpoint, before sending, claims the front of its queue (the batch it has read,
 * the head first) with a lease (claimQueuedDeliveries): a lane that finds the head leased to
 * another live worker (the endpoint was just handed over, or the two processes do not yet
 * agree on the share) waits for that lease to be given back or to end. One claim a batch, so
 * an endpoint stays with one worker at about no cost, and goes to another when that worker
 * stops or dies.
 */
export class DeliveryLane {
  webhook: WebhookRow;
  done: Promise<void> = Promise.resolve();
  private stopRequested = false;
  private stale = true;
  private fed = false;
  /** The endpoint's event cursor when the lane last looked (see feedTo). */
  private eventCursor: number;
  private idle = false;
  private wake: (() => void) | undefined;
  private agents: ReturnType<typeof createEndpointAgents>;
  /** Deliveries of this endpoint this lane has claimed and not yet recorded. */
  private readonly held = new Set<number>();

  constructor(
    private readonly host: LaneHost,
    webhook: WebhookRow,
  ) {
    this.webhook = webhook;
    this.eventCursor = webhook.event_cursor;
    this.agents = createEndpointAgents(host.ctx.config.ALLOW_PRIVATE_TARGETS);
  }

  start(): this {
    this.done = this.run();
    return this;
  }

  /**
   * The endpoint's event cursor as the outbox's fan-out (this process's or another's) left it:
   * past what the lane last saw, deliveries may have been queued, and an idle lane reads its
   * queue again (a waiting one keeps waiting).
   */
  feedTo(eventCursor: number): void {
    if (eventCursor <= this.eventCursor) return;
    this.eventCursor = eventCursor;
    this.fed = true;
    if (this.idle) this.wake?.();
  }

  /** Something changed under the lane (a manual retry): read the queue before going on. */
  refresh(): void {
    this.stale = true;
    this.wake?.();
  }

  /** The endpoint changed (URL, secret, re-enabled): later attempts use the new values. */
  update(webhook: WebhookRow): void {
    if (webhook.url !== this.webhook.url) {
      this.agents.http.destroy();
      this.agents.https.destroy();
      this.agents = createEndpointAgents(this.host.ctx.config.ALLOW_PRIVATE_TARGETS);
    }
    this.webhook = webhook;
    this.refresh();
  }

  /** Stopped, by the worker or by disabling its endpoint. */
  get stopped(): boolean {
    return this.stopRequested;
  }

  /** No attempt starts after this; one under way finishes (or is aborted by the host). */
  stop(): void {
    this.stopRequested = true;
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
      timer.unref();
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const { ctx } = this.host;
    let queue: QueuedDelivery[] = [];
    let lostClaims = 0;
    while (!this.stopRequested) {
      try {
        if (this.stale || queue.length === 0) {
          this.stale = false;
          this.fed = false;
          queue = await listQueuedDeliveries(ctx.db, this.webhook.id, QUEUE_BATCH);
          await this.forgetLeft(queue);
        }
        const head = queue[0];
        if (!head) {
          if (!this.fed && !this.stale && !this.stopRequested) {
            this.idle = true;
            await this.sleep(IDLE_RECHECK_MS);
            this.idle = false;
          }
          continue;
        }
        const leasedFor = this.foreignLeaseMs(head);
        if (leasedFor > 0) {
          // Another worker sends it: until it hands the endpoint over, or its lease ends.
          this.idle = true;
          await this.sleep(Math.min(leasedFor + 10, HANDOVER_RECHECK_MS));
          this.idle = false;
          this.stale = true;
          continue;
        }
        const dueIn = head.next_attempt_at
          ? Date.parse(head.next_attempt_at) - ctx.now().getTime()
          : 0;
        if (dueIn > 0) {
          // Real time, then go: a clock a test holds still cannot stall retries forever.
          await this.sleep(dueIn);
          if (this.stale || this.stopRequested) continue;
        }
        // Checked with no await before attempt() claims it, so a manual retry and the lane
        // never send the same delivery at once.
        if (this.host.inFlight.has(head.seq)) {
          // A manual retry of it is under way; it refreshes the lane when done.
          await this.sleep(ERROR_PAUSE_MS);
          this.stale = true;
          continue;
        }
        if (!this.held.has(head.seq)) {
          const gone = head.lease_owner ?? undefined;
          const claimed = await claimQueuedDeliveries(
            ctx.db,
            this.webhook.id,
            queue.map((d) => d.seq),
            this.host.leases.lease(gone && ownerIsGone(gone) ? gone : undefined),
          );
          for (const seq of claimed) this.hold(seq);
          if (!claimed.includes(head.seq)) {
            // Taken, sent or rescheduled meanwhile: give back what came without the head,
            // and read the queue again.
            await this.release(claimed);
            this.stale = true;
            if (++lostClaims > 1) await this.sleep(CLAIM_RETRY_MS);
            continue;
          }
        }
        lostClaims = 0;
        if (await this.attempt(head)) queue.shift();
      } catch (err) {
        ctx.logger.error({ err, webhook_id: this.webhook.id }, 'webhook lane error; retrying');
        if (!this.stopRequested) await this.sleep(ERROR_PAUSE_MS);
        this.stale = true;
      }
    }
    this.agents.http.destroy();
    this.agents.https.destroy();
    // Stopped (endpoint disabled or removed, or the worker stopping): others may take them.
    try {
      await this.release([...this.held]);
    } catch (err) {
      ctx.logger.warn({ err, webhook_id: this.webhook.id }, 'could not give back leases');
    }
  }

  private hold(seq: number): void {
    this.held.add(seq);
    this.host.leases.held.add(seq);
  }

  private unhold(seq: number): void {
    this.held.delete(seq);
    this.host.leases.held.delete(seq);
  }

  private async release(seqs: number[]): Promise<void> {
    if (seqs.length === 0) return;
    for (const seq of seqs) this.unhold(seq);
    await releaseLeases(this.host.ctx.db, this.host.leases.owner, seqs);
  }

  /**
   * Forgets held deliveries that left the queue by another way (a manual retry sent them), or
   * whose lease ended meanwhile (a manual retry recorded an attempt): claimed again if needed.
   */
  private async forgetLeft(queue: QueuedDelivery[]): Promise<void> {
    if (this.held.size === 0) return;
    for (const d of queue) {
      if (this.held.has(d.seq) && d.lease_owner !== this.host.leases.owner) this.unhold(d.seq);
    }
    const queued = new Set(queue.map((d) => d.seq));
    const last = queue.at(-1)?.seq ?? 0;
    // Past the batch read: still queued, maybe; kept (released when the lane stops).
    await this.release([...this.held].filter((seq) => seq <= last && !queued.has(seq)));
  }

  /**
   * Milliseconds until the lease another live worker holds on a delivery lapses; 0 when it is
   * free, ours, lapsed, or its holder is known to be gone.
   */
  private foreignLeaseMs(head: QueuedDelivery): number {
    const owner = head.lease_owner;
    if (owner === null || owner === this.host.leases.owner || !head.lease_expires_at) return 0;
    const left = Date.parse(head.lease_expires_at) - this.host.ctx.now().getTime();
    if (left <= 0 || ownerIsGone(owner)) return 0;
    return left;
  }

  /** One attempt of the head of the queue (claimed); true when the delivery left the queue. */
  private async attempt(head: QueuedDelivery): Promise<boolean> {
    const { ctx, inFlight, signal, record } = this.host;
    const webhook = this.webhook;
    inFlight.add(head.seq);
    let recording = false;
    const expected = this.host.expect();
    try {
      const body = buildDeliveryBody(head.event_type, head.data, head.event_created_at);
      const sent = await sendToEndpoint(ctx, webhook, head.event_id, body, {
        agents: this.agents,
        signal,
      });
      if (sent.outcome.aborted) {
        // The lease stays held until the worker gives its leases back on stop.
        this.stopRequested = true;
        return false;
      }
      const attempt = head.attempts + 1;
      let state: { status: DeliveryStatus; next_attempt_at: string | null };
      if (sent.outcome.ok) state = { status: 'succeeded', next_attempt_at: null };
      else if (sent.outcome.statusCode === 410) state = { status: 'failed', next_attempt_at: null };
      else {
        state = nextAfterFailure(
          attempt,
          ctx.config.WEBHOOK_RETRY_SCHEDULE,
          sent.outcome.retryAfterSeconds,
          ctx.now(),
        );
      }
      recording = true;
      const settled = await record(
        {
          webhookId: webhook.id,
          deliverySeq: head.seq,
          attempt,
          trigger: 'schedule',
          sent,
          next: state,
        },
        expected,
      );
      // Recorded: the attempt's lease ended with it.
      this.unhold(head.seq);
      if (!sent.outcome.ok) {
        ctx.logger.warn(
          {
            webhook_id: webhook.id,
            delivery_id: head.id,
            event_id: head.event_id,
            attempt,
            error: sent.outcome.error,
            next_attempt_at: state.next_attempt_at,
          },
          state.status === 'failed'
            ? 'webhook delivery failed for good'
            : 'webhook delivery failed',
        );
      }
      if (settled.disabled) {
        ctx.logger.warn(
          { webhook_id: webhook.id, reason: settled.disabled },
          'webhook endpoint disabled',
        );
        this.stopRequested = true;
      }
      head.attempts = attempt;
      head.next_attempt_at = state.next_attempt_at;
      head.lease_owner = null;
      return state.status !== 'pending';
    } finally {
      if (!recording) this.host.cancel(expected);
      inFlight.delete(head.seq);
    }
  }
}
