import { dialectOf } from '../../db/dialect.js';
import type { Db } from '../../db/store.js';
import { isLockUnavailable } from '../../db/transaction.js';
import {
  advanceEventCursor,
  insertDeliveries,
  listEventHeadsAfter,
} from '../../db/queries/webhook-deliveries.js';
import { listActiveWebhookRows, lockWebhookRows } from '../../db/queries/webhooks.js';
import type { NewWebhookDeliveryRow, WebhookRow } from '../../db/schema.js';
import { newSortableId } from '../../ids.js';
import { eventFilterOf } from './webhooks.js';

export interface FanOutResult {
  /** The active endpoints, as read in the fan-out's transaction, cursors moved past the batch. */
  webhooks: WebhookRow[];
  /** A full batch was read: more events may be waiting. */
  more: boolean;
}

/**
 * Reads the next batch of outbox events after the lowest cursor of the active endpoints and
 * queues one delivery per event and endpoint that takes its kind, then moves the cursors past
 * the batch, all in one transaction: an event is queued for an endpoint exactly once, and a
 * crash at any point loses none. Every event kind is handled alike, so kinds added by other
 * parts of the service are delivered without a change here.
 *
 * On SQLite, events commit in seq order (one writer at a time), so an event a reader has not
 * seen can never appear below a seq it has seen, and cursors never skip one. On PostgreSQL,
 * which hands out seqs before commit, the fan-out first waits for every transaction writing
 * events to end and holds new ones off until it commits (DialectSql.lockTableWrites on
 * `events`): the same guarantee, and two processes' fan-outs take turns, so an event is never
 * queued twice for an endpoint. It waits for that lock briefly only: null when the outbox is
 * busy (a long writer holds it), and the worker comes back at its next poll.
 */
export async function fanOutEvents(
  db: Db,
  batchSize: number,
  now: Date,
): Promise<FanOutResult | null> {
  // Nothing to queue (no endpoint, or no event committed past the lowest cursor): no lock.
  const seen = await listActiveWebhookRows(db);
  if (seen.length === 0) return { webhooks: seen, more: false };
  const lowest = Math.min(...seen.map((w) => w.event_cursor));
  if ((await listEventHeadsAfter(db, lowest, 1)).length === 0)
    return { webhooks: seen, more: false };
  try {
    return await fanOutLocked(db, batchSize, now);
  } catch (err) {
    if (isLockUnavailable(err)) return null;
    throw err;
  }
}

/**
 * How long a fan-out waits for the outbox's writers in flight: writers that come meanwhile
 * queue behind its request, so past this it gives up and comes back at the next poll (a long
 * writer, a sync's apply, holds the outbox to its commit).
 */
const FAN_OUT_LOCK_WAIT_MS = 50;

async function fanOutLocked(db: Db, batchSize: number, now: Date): Promise<FanOutResult> {
  return db.transaction().execute(async (trx) => {
    // One fan-out at a time across processes, and no outbox write in flight below it.
    await dialectOf(trx).lockTableWrites(trx, 'events', { waitMs: FAN_OUT_LOCK_WAIT_MS });
    const webhooks = await listActiveWebhookRows(trx);
    if (webhooks.length === 0) return { webhooks, more: false };
    const from = Math.min(...webhooks.map((w) => w.event_cursor));
    const events = await listEventHeadsAfter(trx, from, batchSize);
    if (events.length === 0) return { webhooks, more: false };
    const created = now.toISOString();
    // Ids that sort by time: the unique index on id grows at its end, not at random pages.
    const nowMs = now.getTime();
    const rows: NewWebhookDeliveryRow[] = [];
    const filters = webhooks.map(eventFilterOf);
    // Event by event, then endpoint by endpoint: the deliveries of one event sit side by side,
    // so lanes that keep up record their attempts on the same pages (fewer pages a commit).
    for (const event of events) {
      for (const [i, webhook] of webhooks.entries()) {
        if (event.seq <= webhook.event_cursor) continue;
        const filter = filters[i];
        if (filter && !filter.has(event.type)) continue;
        rows.push({
          id: newSortableId('dlv', 16, nowMs),
          webhook_id: webhook.id,
          event_seq: event.seq,
          event_id: event.id,
          event_type: event.type,
          payload: null,
          status: 'pending',
          attempts: 0,
          next_attempt_at: created,
          created_at: created,
        });
      }
    }
    await insertDeliveries(trx, rows);
    const last = events[events.length - 1]!.seq;
    const ids = webhooks.map((w) => w.id);
    // The endpoints' rows locked in the order every writer of several takes them (by id, as
    // a record of attempts does): an UPDATE alone takes them in the table's order, which can
    // deadlock with a record on PostgreSQL, and a record that fails sends its attempts again.
    await lockWebhookRows(trx, ids);
    await advanceEventCursor(trx, ids, last);
    for (const w of webhooks) w.event_cursor = Math.max(w.event_cursor, last);
    return { webhooks, more: events.length === batchSize };
  });
}
