import {
  claimDelivery,
  findDelivery,
  findDeliveryBySeq,
  findEventBySeq,
  insertDelivery,
  releaseLeases,
} from '../../db/queries/webhook-deliveries.js';
import type { DeliveryStatus } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { sendToEndpoint, type DeliveryContext } from './attempt.js';
import type { LeaseKeeper } from './lease.js';
import { recordAttempts } from './record.js';
import { TEST_EVENT_TYPE, type WebhookDelivery } from './schemas.js';
import { buildDeliveryBody } from './signature.js';
import { findWebhook, presentDelivery } from './webhooks.js';

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
  leases: LeaseKeeper,
): Promise<WebhookDelivery> {
  const webhook = await findWebhook(ctx.db, webhookId);
  const delivery = await findDelivery(ctx.db, webhookId, deliveryId);
  if (!delivery) throw notFound('delivery', deliveryId);
  const underWay = () =>
    new AppError('conflict', 'An attempt of this delivery is under way; retry shortly.', {
      field: 'delivery_id',
      reason: 'attempt under way',
      retryAfter: 1,
    });
  if (inFlight.has(delivery.seq)) throw underWay();
  // Claimed before the next await, so the endpoint's lane cannot start the same delivery.
  inFlight.add(delivery.seq);
  let recorded = false;
  try {
    // And leased, so no other process's worker sends it meanwhile (nor records attempt N+1).
    if (!(await claimDelivery(ctx.db, delivery.seq, leases.lease()))) throw underWay();
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
    recorded = true; // recording ended the lease
    leases.held.delete(delivery.seq); // the lane claims it again if it is still queued
  } finally {
    inFlight.delete(delivery.seq);
    if (!recorded) await releaseLeases(ctx.db, leases.owner, [delivery.seq]);
  }
  return presentDelivery((await findDeliveryBySeq(ctx.db, delivery.seq))!);
}
