import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import {
  advanceDeliveries,
  findDelivery,
  findDeliveryBySeq,
  findEventBySeq,
  insertAttempts,
  insertDelivery,
  pausePendingDeliveries,
} from '../db/queries/webhook-deliveries.js';
import {
  clearWebhooksFailing,
  disableWebhookRow,
  findWebhookById,
  markWebhookFailing,
} from '../db/queries/webhooks.js';
import type {
  AttemptTrigger,
  DeliveryStatus,
  WebhookDisabledReason,
  WebhookRow,
} from '../db/schema.js';
import { AppError, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { VERSION } from '../version.js';
import { postDelivery, type PostOutcome } from './webhook-sender.js';
import { buildDeliveryBody, signatureHeaders, signingSecrets } from './webhook-signature.js';
import { TEST_EVENT_TYPE, type WebhookDelivery } from './webhook-schemas.js';
import { findWebhook, presentDelivery } from './webhooks.js';

/** An endpoint whose every attempt failed for this long is disabled (CONTRACT part 7). */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000;

export const USER_AGENT = `agentshelf/${VERSION}`;

/** What sending and recording an attempt needs; the worker and the API share it. */
export interface DeliveryContext {
  db: Db;
  config: Config;
  logger: Logger;
  now: () => Date;
}

export interface SendOptions {
  agents?: Parameters<typeof postDelivery>[0]['agents'];
  signal?: AbortSignal;
}

export interface SentAttempt {
  startedAt: Date;
  outcome: PostOutcome;
}

/** Signs a body with the endpoint's current secrets and POSTs it. */
export async function sendToEndpoint(
  ctx: DeliveryContext,
  webhook: WebhookRow,
  eventId: string,
  body: string,
  options: SendOptions = {},
): Promise<SentAttempt> {
  const startedAt = ctx.now();
  const headers = {
    ...signatureHeaders(
      body,
      signingSecrets(webhook, startedAt),
      Math.floor(startedAt.getTime() / 1000),
    ),
    'X-Webhook-Id': eventId,
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
  };
  const outcome = await postDelivery({
    url: webhook.url,
    body,
    headers,
    timeoutMs: ctx.config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    allowPrivate: ctx.config.ALLOW_PRIVATE_TARGETS,
    agents: options.agents,
    signal: options.signal,
  });
  return { startedAt, outcome };
}

/**
 * The state after a failed scheduled attempt number `attempt`: the next try after the
 * schedule's delay (or the receiver's Retry-After), or failed when the schedule is spent.
 */
export function nextAfterFailure(
  attempt: number,
  schedule: number[],
  retryAfterSeconds: number | undefined,
  now: Date,
): { status: DeliveryStatus; next_attempt_at: string | null } {
  if (attempt > schedule.length) return { status: 'failed', next_attempt_at: null };
  const delaySeconds = retryAfterSeconds ?? schedule[attempt - 1]!;
  return {
    status: 'pending',
    next_attempt_at: new Date(now.getTime() + delaySeconds * 1000).toISOString(),
  };
}

type Executor = Parameters<typeof insertAttempts>[0];

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
  return ctx.db.transaction().execute(async (trx) => {
    await insertAttempts(
      trx,
      attempts.map((a) => ({
        delivery_seq: a.deliverySeq,
        attempt: a.attempt,
        trigger: a.trigger,
        started_at: a.sent.startedAt.toISOString(),
        status_code: a.sent.outcome.statusCode,
        duration_ms: a.sent.outcome.durationMs,
        error: a.sent.outcome.error,
        response_body: a.sent.outcome.responseBody,
      })),
    );
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
 * Group commit for the worker's lanes: attempts finished in the same turn of the event loop
 * are recorded in one transaction. A lane waits for its record before its next attempt, so
 * order and at-least-once hold exactly as with one transaction per attempt.
 */
export class AttemptRecorder {
  private waiting: {
    attempt: FinishedAttempt;
    resolve: (s: Settled) => void;
    reject: (e: unknown) => void;
  }[] = [];
  private scheduled = false;

  constructor(private readonly ctx: DeliveryContext) {}

  record(attempt: FinishedAttempt): Promise<Settled> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ attempt, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.waiting.splice(0);
    try {
      const settled = await recordAttempts(
        this.ctx,
        batch.map((b) => b.attempt),
      );
      batch.forEach((b, i) => b.resolve(settled[i]!));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}

/** Sends a `webhook.test` event to an endpoint now, whatever its events and status. */
export async function sendTestDelivery(
  ctx: DeliveryContext,
  webhookId: string,
): Promise<WebhookDelivery> {
  const webhook = await findWebhook(ctx.db, webhookId);
  const now = ctx.now();
  const eventId = newId('evt', 20);
  const data = JSON.stringify({
    webhook_id: webhook.id,
    url: webhook.url,
    message: 'A test delivery from agentshelf: if you can read this, the endpoint works.',
  });
  const body = buildDeliveryBody(TEST_EVENT_TYPE, data, now.toISOString());
  const sent = await sendToEndpoint(ctx, webhook, eventId, body);
  const status: DeliveryStatus = sent.outcome.ok ? 'succeeded' : 'failed';
  const seq = await insertDelivery(ctx.db, {
    id: newId('dlv'),
    webhook_id: webhook.id,
    event_seq: null,
    event_id: eventId,
    event_type: TEST_EVENT_TYPE,
    payload: body,
    status,
    attempts: 0,
    created_at: now.toISOString(),
  });
  await recordAttempts(ctx, [
    {
      webhookId: webhook.id,
      deliverySeq: seq,
      attempt: 1,
      trigger: 'test',
      sent,
      next: { status, next_attempt_at: null },
    },
  ]);
  return presentDelivery((await findDeliveryBySeq(ctx.db, seq))!);
}

/** Delivery seqs with an attempt under way, shared by the worker's lanes and manual retries. */
export type InFlight = Set<number>;

/**
 * Sends a delivery again now, outside its endpoint's queue, and records the attempt. A
 * success settles it (a pending one leaves the queue); a failure leaves its state and retry
 * schedule as they were. Refused while another attempt of it is under way.
 */
export async function retryDeliveryNow(
  ctx: DeliveryContext,
  webhookId: string,
  deliveryId: string,
  inFlight: InFlight,
): Promise<WebhookDelivery> {
  const webhook = await findWebhook(ctx.db, webhookId);
  const delivery = await findDelivery(ctx.db, webhookId, deliveryId);
  if (!delivery) throw notFound('delivery', deliveryId);
  if (inFlight.has(delivery.seq)) {
    throw new AppError('conflict', 'An attempt of this delivery is under way; retry shortly.', {
      field: 'delivery_id',
      reason: 'attempt under way',
      retryAfter: 1,
    });
  }
  // Claimed before the next await, so the endpoint's lane cannot start the same delivery.
  inFlight.add(delivery.seq);
  try {
    let body = delivery.payload;
    if (body === null) {
      const event = await findEventBySeq(ctx.db, delivery.event_seq!);
      if (!event) throw notFound('event', delivery.event_id);
      body = buildDeliveryBody(event.type, event.data, event.created_at);
    }
    const sent = await sendToEndpoint(ctx, webhook, delivery.event_id, body);
    const next = sent.outcome.ok
      ? { status: 'succeeded' as const, next_attempt_at: null }
      : { status: delivery.status, next_attempt_at: delivery.next_attempt_at };
    await recordAttempts(ctx, [
      {
        webhookId: webhook.id,
        deliverySeq: delivery.seq,
        attempt: delivery.attempts + 1,
        trigger: 'manual',
        sent,
        next,
      },
    ]);
  } finally {
    inFlight.delete(delivery.seq);
  }
  return presentDelivery((await findDeliveryBySeq(ctx.db, delivery.seq))!);
}
