import type { Db } from '../db/store.js';
import type { Executor } from '../db/transaction.js';
import { announceChange } from './changes.js';
import { insertEvent, insertEvents, selectEventsAfter } from '../db/queries/events.js';
import { storedTimestamp } from '../db/timestamps.js';
import { newSortableId } from '../ids.js';

/** Every event kind of SPEC part 6. */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.deleted',
  'feed.generated',
  'feed.updated',
  'feed.published',
  'feed.delivered',
  'feed.delivery_failed',
  'feed.delivery_held',
  'integration.connected',
  'integration.disconnected',
  'integration.sync.completed',
  'integration.sync.failed',
  'integration.sync.held',
  'discovery.published',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface RecordedEvent {
  id: string;
  type: EventType;
  data: unknown;
  created_at: string;
}

/**
 * Writes an event to the outbox. Call it with the transaction that makes the change,
 * so the change and its event commit (or roll back) together; eventRecorded is announced
 * after the commit.
 */
export async function recordEvent(
  trx: Executor,
  type: EventType,
  data: unknown,
  now: Date = new Date(),
): Promise<RecordedEvent> {
  const event = {
    id: newSortableId('evt', 20, now.getTime()),
    type,
    data,
    created_at: storedTimestamp(now),
  };
  await insertEvent(trx, {
    id: event.id,
    type,
    data: JSON.stringify(data),
    created_at: event.created_at,
  });
  announceChange(trx, 'eventRecorded');
  return event;
}

/**
 * Writes one event of a kind per item of `data`, in order, with multi-row inserts (bulk
 * writers: the sync). Same rules as recordEvent: the caller's transaction.
 */
export async function recordEvents(
  trx: Executor,
  type: EventType,
  data: unknown[],
  now: Date = new Date(),
): Promise<void> {
  if (data.length === 0) return;
  const createdAt = storedTimestamp(now);
  await insertEvents(
    trx,
    data.map((d) => ({
      id: newSortableId('evt', 20, now.getTime()),
      type,
      data: JSON.stringify(d),
      created_at: createdAt,
    })),
  );
  announceChange(trx, 'eventRecorded');
}

/** Events after a sequence number, oldest first. */
export async function listEventsAfter(db: Db, afterSeq: number, limit: number) {
  const rows = await selectEventsAfter(db, afterSeq, limit);
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as unknown }));
}
