import type { Db } from '../../db/store.js';
import {
  countDeliveryRows,
  findDelivery,
  listAttemptRows,
  listDeliveryRows,
  makePendingDueNow,
  pausePendingDeliveries,
  type DeliveryView,
} from '../../db/queries/webhook-deliveries.js';
import {
  countWebhooks,
  deleteWebhookRow,
  findWebhookById,
  insertWebhook,
  latestEventSeq,
  listWebhookRows,
  updateWebhookRow,
} from '../../db/queries/webhooks.js';
import type { WebhookRow, WebhookRowUpdate } from '../../db/schema.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { dialectOf } from '../../db/dialect.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { announceChange } from '../changes.js';
import { checkTarget, TargetRefusedError } from '../../net/target-guard.js';
import { generateWebhookSecret, ROTATION_OVERLAP_MS } from './signature.js';
import {
  ALL_EVENTS,
  type DeliveryListQuery,
  type Webhook,
  type WebhookCreateInput,
  type WebhookDelivery,
  type WebhookUpdateInput,
} from './schemas.js';

/** At most this many endpoints per store: each one is a delivery lane in the worker. */
export const MAX_WEBHOOKS = 100;

export interface WebhookPolicy {
  /** ALLOW_PRIVATE_TARGETS. */
  allowPrivate: boolean;
}

/** A new or changed secret, returned to the caller once when it was generated. */
export interface WebhookChange {
  webhook: Webhook;
  secret?: string;
}

/** The event kinds an endpoint takes: null for every kind. */
export function eventFilterOf(row: Pick<WebhookRow, 'events'>): Set<string> | null {
  return row.events === null ? null : new Set(JSON.parse(row.events) as string[]);
}

function storedEvents(kinds: string[] | undefined): string | null {
  return kinds === undefined || kinds.includes(ALL_EVENTS) ? null : JSON.stringify(kinds);
}

/** A webhook as the API returns it: never its secrets. */
export function presentWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events === null ? [ALL_EVENTS] : (JSON.parse(row.events) as string[]),
    status: row.status,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
    failing_since: row.failing_since,
    previous_secret_expires_at: row.previous_secret_expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentDelivery(row: DeliveryView): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.event_type,
    test: row.event_seq === null,
    status: row.status,
    attempts: row.attempts,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    created_at: row.created_at,
  };
}

async function guardUrl(url: string, policy: WebhookPolicy): Promise<void> {
  try {
    await checkTarget(url, { allowPrivate: policy.allowPrivate });
  } catch (err) {
    if (err instanceof TargetRefusedError) throw invalidField('url', `is refused: ${err.reason}`);
    throw err;
  }
}

/**
 * Registers an endpoint. It receives the events recorded from now on (not the outbox's
 * past). Without a secret, one is generated and returned this once.
 */
export async function createWebhook(
  db: Executor,
  input: WebhookCreateInput,
  policy: WebhookPolicy,
  now: Date = new Date(),
): Promise<WebhookChange> {
  await guardUrl(input.url, policy);
  const secret = input.secret ?? generateWebhookSecret();
  const stamp = now.toISOString();
  const row = await withTransaction(db, async (trx) => {
    // The count decides: no other endpoint is added (nor removed) until this one commits.
    await dialectOf(trx).lockTableWrites(trx, 'webhooks');
    if ((await countWebhooks(trx)) >= MAX_WEBHOOKS) {
      throw new AppError(
        'conflict',
        `A store has at most ${MAX_WEBHOOKS} webhooks; delete one first.`,
        { field: 'url', reason: `at most ${MAX_WEBHOOKS} webhooks` },
      );
    }
    const created: WebhookRow = {
      id: newId('wh'),
      url: input.url,
      events: storedEvents(input.events),
      secret,
      previous_secret: null,
      previous_secret_expires_at: null,
      status: 'active',
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      event_cursor: await latestEventSeq(trx),
      created_at: stamp,
      updated_at: stamp,
    };
    await insertWebhook(trx, created);
    announceChange(trx, 'webhooksChanged');
    return created;
  });
  return {
    webhook: presentWebhook(row),
    ...(input.secret === undefined ? { secret } : {}),
  };
}

export async function listWebhooks(db: Db, page: { limit: number; offset: number }) {
  const rows = await listWebhookRows(db, page);
  const total = await countWebhooks(db);
  return {
    webhooks: rows.map(presentWebhook),
    pagination: {
      limit: page.limit,
      offset: page.offset,
      total,
      has_more: page.offset + rows.length < total,
    },
  };
}

export async function findWebhook(db: Db, id: string): Promise<WebhookRow> {
  const row = await findWebhookById(db, id);
  if (!row) throw notFound('webhook', id);
  return row;
}

/**
 * Changes what the input carries. Disabling pauses the endpoint's queue; enabling resumes it
 * at once and skips the events recorded while it was disabled. A rotation (rotate_secret, or
 * a new secret given) keeps the old secret signing beside the new one for 24 hours.
 */
export async function updateWebhook(
  db: Executor,
  id: string,
  input: WebhookUpdateInput,
  policy: WebhookPolicy,
  now: Date = new Date(),
): Promise<WebhookChange> {
  if (input.url !== undefined) await guardUrl(input.url, policy);
  const stamp = now.toISOString();
  let generated: string | undefined;
  const row = await withTransaction(db, async (trx) => {
    const before = await findWebhookById(trx, id, true);
    if (!before) throw notFound('webhook', id);
    const patch: WebhookRowUpdate = {};
    if (input.url !== undefined) patch.url = input.url;
    if (input.events !== undefined) patch.events = storedEvents(input.events);
    if (input.status === 'disabled' && before.status === 'active') {
      Object.assign(patch, {
        status: 'disabled',
        disabled_reason: 'requested',
        disabled_at: stamp,
      });
      await pausePendingDeliveries(trx, id);
    }
    if (input.status === 'active' && before.status === 'disabled') {
      Object.assign(patch, {
        status: 'active',
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        event_cursor: await latestEventSeq(trx),
      });
      await makePendingDueNow(trx, id, stamp);
    }
    const newSecret = input.rotate_secret ? generateWebhookSecret() : input.secret;
    if (newSecret !== undefined) {
      generated = input.rotate_secret ? newSecret : undefined;
      patch.secret = newSecret;
      patch.previous_secret = before.secret;
      patch.previous_secret_expires_at = new Date(
        now.getTime() + ROTATION_OVERLAP_MS,
      ).toISOString();
    }
    if (Object.keys(patch).length === 0) return before;
    patch.updated_at = stamp;
    await updateWebhookRow(trx, id, patch);
    announceChange(trx, 'webhooksChanged');
    return { ...before, ...patch } as WebhookRow;
  });
  return { webhook: presentWebhook(row), ...(generated ? { secret: generated } : {}) };
}

/** Deletes an endpoint with its delivery log. */
export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await withTransaction(db, async (trx) => {
    if (!(await deleteWebhookRow(trx, id))) throw notFound('webhook', id);
    announceChange(trx, 'webhooksChanged');
  });
}

/** An endpoint's delivery log, newest first. */
export async function listDeliveries(db: Db, webhookId: string, query: DeliveryListQuery) {
  await findWebhook(db, webhookId);
  const { limit, offset, status, event } = query;
  const filter = { status, event_type: event };
  const rows = await listDeliveryRows(db, webhookId, filter, { limit, offset });
  const total = await countDeliveryRows(db, webhookId, filter);
  return {
    deliveries: rows.map(presentDelivery),
    pagination: { limit, offset, total, has_more: offset + rows.length < total },
  };
}

/** One delivery with every attempt made. */
export async function getDelivery(db: Db, webhookId: string, deliveryId: string) {
  await findWebhook(db, webhookId);
  const row = await findDelivery(db, webhookId, deliveryId);
  if (!row) throw notFound('delivery', deliveryId);
  const attempts = await listAttemptRows(db, row.seq);
  return {
    ...presentDelivery(row),
    history: attempts.map(({ delivery_seq: _seq, ...attempt }) => attempt),
  };
}
