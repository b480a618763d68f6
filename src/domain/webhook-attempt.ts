import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import {
  findDelivery,
  findDeliveryBySeq,
  findEventBySeq,
  insertDelivery,
  pausePendingDeliveries,
  recordAttempt,
} from '../db/queries/webhook-deliveries.js';
import {
  clearWebhookFailing,
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

type Executor = Parameters<typeof recordAttempt>[0];

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

export interface Settled {
  attempt: number;
  /** Set when this attempt disabled the endpoint. */
  disabled?: 'endpoint_gone' | 'failing';
}

/**
 * Records an attempt, the delivery's next state and what it means for the endpoint, in one
 * transaction: a success ends a failure run; 410 disables the endpoint; a failure that ends
 * 3 days of failures disables it too.
 */
export async function settleAttempt(
  ctx: DeliveryContext,
  webhookId: string,
  deliverySeq: number,
  trigger: AttemptTrigger,
  sent: SentAttempt,
  next: { status: DeliveryStatus; next_attempt_at: string | null },
): Promise<Settled> {
  const { outcome, startedAt } = sent;
  const at = startedAt.toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const attempt = await recordAttempt(
      trx,
      deliverySeq,
      {
        trigger,
        started_at: at,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        response_body: outcome.responseBody,
      },
      next,
    );
    if (outcome.ok) {
      await clearWebhookFailing(trx, webhookId);
      return { attempt };
    }
    if (outcome.statusCode === 410) {
      await disableWebhook(trx, webhookId, 'endpoint_gone', ctx.now());
      return { attempt, disabled: 'endpoint_gone' };
    }
    await markWebhookFailing(trx, webhookId, at);
    const failingSince = (await findWebhookById(trx, webhookId))?.failing_since;
    if (
      failingSince &&
      ctx.now().getTime() - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS
    ) {
      await disableWebhook(trx, webhookId, 'failing', ctx.now());
      return { attempt, disabled: 'failing' };
    }
    return { attempt };
  });
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
  await settleAttempt(ctx, webhook.id, seq, 'test', sent, { status, next_attempt_at: null });
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
    await settleAttempt(ctx, webhook.id, delivery.seq, 'manual', sent, next);
  } finally {
    inFlight.delete(delivery.seq);
  }
  return presentDelivery((await findDeliveryBySeq(ctx.db, delivery.seq))!);
}
