import {
  advanceDeliveries,
  insertAttempts,
  pausePendingDeliveries,
  recordSucceededAttemptsPg,
} from '../../db/queries/webhook-deliveries.js';
import {
  clearWebhooksFailing,
  disableWebhookRow,
  findWebhookById,
  lockWebhookRows,
  markWebhookFailing,
} from '../../db/queries/webhooks.js';
import { isSqlite } from '../../db/sqlite/dialect-sql.js';
import type {
  AttemptTrigger,
  DeliveryStatus,
  WebhookAttemptRow,
  WebhookDisabledReason,
} from '../../db/schema.js';
import { retryOnConflict, type Executor } from '../../db/transaction.js';
import type { DeliveryContext, SentAttempt } from './attempt.js';

/** An endpoint whose every attempt failed for this long is disabled (CONTRACT part 7). */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000;

/** Disables an endpoint and pauses its queue (no next attempt time until it is enabled). */
async function disableWebhook(
  trx: Executor,
  webhookId: string,
  reason: WebhookDisabledReason,
  now: Date,
): Promise<void> {
  await disableWebhookRow(trx, webhookId, reason, now.toISOString());
  await pausePendingDeliveries(trx, webhookId);
}

/** One attempt made, to be recorded with the state its delivery moves to. */
export interface FinishedAttempt {
  webhookId: string;
  deliverySeq: number;
  /** Its number: the delivery's attempts so far, plus one. */
  attempt: number;
  trigger: AttemptTrigger;
  sent: SentAttempt;
  next: { status: DeliveryStatus; next_attempt_at: string | null };
}

export interface Settled {
  /** Set when this attempt disabled the endpoint. */
  disabled?: 'endpoint_gone' | 'failing';
}

/**
 * Records attempts, their deliveries' next state and what they mean for their endpoints,
 * in one transaction: a success ends a failure run; 410 disables the endpoint; a failure
 * that ends 3 days of failures disables it too. Set-based statements, so a batch costs
 * about what one attempt does.
 */
export async function recordAttempts(
  ctx: DeliveryContext,
  attempts: FinishedAttempt[],
): Promise<Settled[]> {
  if (
    !isSqlite(ctx.db) &&
    attempts.every((a) => a.sent.outcome.ok && a.next.status === 'succeeded')
  ) {
    // The common case in one round trip; a failure's settling reads and decides, below.
    await recordSucceededAttemptsPg(
      ctx.db,
      attempts.map(attemptRow),
      attempts.map((a) => a.webhookId),
    );
    return attempts.map(() => ({}));
  }
  return ctx.db.transaction().execute(async (trx) => {
    // The endpoints before their deliveries (as updateWebhook takes them).
    await lockWebhookRows(
      trx,
      attempts.map((a) => a.webhookId),
    );
    await insertAttempts(trx, attempts.map(attemptRow));
    const byNext = new Map<string, FinishedAttempt[]>();
    for (const a of attempts) {
      const key = `${a.next.status}|${a.next.next_attempt_at}`;
      byNext.set(key, [...(byNext.get(key) ?? []), a]);
    }
    for (const group of byNext.values()) {
      await advanceDeliveries(
        trx,
        group.map((a) => a.deliverySeq),
        group[0]!.next,
      );
    }
    await clearWebhooksFailing(
      trx,
      attempts.filter((a) => a.sent.outcome.ok).map((a) => a.webhookId),
    );
    const settled: Settled[] = [];
    for (const a of attempts) {
      settled.push(a.sent.outcome.ok ? {} : await settleFailure(ctx, trx, a));
    }
    return settled;
  });
}

function attemptRow(a: FinishedAttempt): WebhookAttemptRow {
  return {
    delivery_seq: a.deliverySeq,
    attempt: a.attempt,
    trigger: a.trigger,
    started_at: a.sent.startedAt.toISOString(),
    status_code: a.sent.outcome.statusCode,
    duration_ms: a.sent.outcome.durationMs,
    error: a.sent.outcome.error,
    response_body: a.sent.outcome.responseBody,
  };
}

async function settleFailure(
  ctx: DeliveryContext,
  trx: Executor,
  a: FinishedAttempt,
): Promise<Settled> {
  if (a.sent.outcome.statusCode === 410) {
    await disableWebhook(trx, a.webhookId, 'endpoint_gone', ctx.now());
    return { disabled: 'endpoint_gone' };
  }
  await markWebhookFailing(trx, a.webhookId, a.sent.startedAt.toISOString());
  const failingSince = (await findWebhookById(trx, a.webhookId))?.failing_since;
  if (failingSince && ctx.now().getTime() - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS) {
    await disableWebhook(trx, a.webhookId, 'failing', ctx.now());
    return { disabled: 'failing' };
  }
  return {};
}

/**
 * The longest a finished attempt waits for the others under way before its group commits;
 * only attempts sent that recently are waited for, so a slow endpoint delays no other. On
 * SQLite only: its commit is the one writer's CPU and WAL pages, which a group shares; on
 * PostgreSQL a commit is a few round trips to the server, and waiting would only add to them.
 */
const GROUP_WAIT_MS = 2;

/** An attempt a lane has sent, until it is recorded or given up (see AttemptRecorder.expect). */
export interface ExpectedAttempt {
  readonly sentAt: number;
}

/**
 * Group commit for the worker's lanes: one transaction at a time, over the attempts finished
 * while the previous transaction ran and those of the lanes whose attempts were sent within
 * the last GROUP_WAIT_MS (each lane tells when it sends, expect()), waited for up to that
 * long: lanes that keep up then share one commit a round (about one per endpoint, where they
 * shared one per 4 of 5 before), and a commit writes every page it touched, most of them
 * shared between attempts. A lane waits for its record before its next attempt, so order
 * and at-least-once hold exactly as with one transaction per attempt (and a killed process
 * sends again at most the one delivery per endpoint it had in flight).
 */
export class AttemptRecorder {
  private waiting: {
    attempt: FinishedAttempt;
    resolve: (s: Settled) => void;
    reject: (e: unknown) => void;
  }[] = [];
  /** Attempts lanes have sent and not yet handed to record() (or given up on). */
  private readonly underWay = new Set<ExpectedAttempt>();
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;
  private readonly groupWaitMs: number;

  constructor(private readonly ctx: DeliveryContext) {
    this.groupWaitMs = isSqlite(ctx.db) ? GROUP_WAIT_MS : 0;
  }

  /** A lane sends an attempt: record() or cancel() follows, with what this returns. */
  expect(): ExpectedAttempt {
    const expected = { sentAt: performance.now() };
    this.underWay.add(expected);
    return expected;
  }

  /** An expected attempt will not be recorded (stopped by shutdown). */
  cancel(expected: ExpectedAttempt): void {
    this.underWay.delete(expected);
    this.schedule();
  }

  record(attempt: FinishedAttempt, expected?: ExpectedAttempt): Promise<Settled> {
    if (expected) this.underWay.delete(expected);
    return new Promise((resolve, reject) => {
      this.waiting.push({ attempt, resolve, reject });
      this.schedule();
    });
  }

  /** Whether an attempt sent within the last GROUP_WAIT_MS is still under way. */
  private othersComing(): boolean {
    const since = performance.now() - this.groupWaitMs;
    for (const expected of this.underWay) if (expected.sentAt > since) return true;
    return false;
  }

  private schedule(): void {
    if (this.scheduled || this.flushing || this.waiting.length === 0) return;
    if (this.groupWaitMs > 0 && this.othersComing()) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flushSoon();
      }, this.groupWaitMs);
      return;
    }
    this.flushSoon();
  }

  private flushSoon(): void {
    if (this.scheduled || this.flushing || this.waiting.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const batch = this.waiting.splice(0);
    try {
      // A record that failed would send its attempts again: one PostgreSQL rolled back to
      // break a deadlock is run again instead.
      const settled = await retryOnConflict(
        () =>
          recordAttempts(
            this.ctx,
            batch.map((b) => b.attempt),
          ),
        (err, attempt) =>
          this.ctx.logger.warn(
            { err, attempt, attempts: batch.length },
            'webhook worker: recording attempts met a conflict; running it again',
          ),
      );
      batch.forEach((b, i) => b.resolve(settled[i]!));
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.flushing = false;
      this.schedule();
    }
  }
}
