/**
 * Channel deliveries (CONTRACT part 10): each generation of a feed with a push delivery makes
 * one delivery record. Content identical to the last delivered (sha256) is `skipped`; a
 * product count that falls more than `max_drop` below the last delivered is `held` until
 * released; the rest is `pending`, and the runner sends it (retried on a schedule), recording
 * what the remote answered. Events go through the outbox in the record's transaction.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  claimFeedDelivery,
  countFeedDeliveries,
  finishFeedDelivery,
  findFeedDelivery,
  findLastDelivered,
  insertFeedDelivery,
  listDueDeliveries,
  listFeedDeliveryRows,
  listWaitingDeliveries,
  renewFeedDeliveryLease,
  updateFeedDelivery,
  type DeliveryLease,
} from '../../db/queries/feed-deliveries.js';
import { findFeedById } from '../../db/queries/feeds.js';
import type { FeedDeliveryRow, FeedDeliveryStatus, FeedRow } from '../../db/schema.js';
import type { Db } from '../../db/store.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import { newSortableId, randomBase62 } from '../../ids.js';
import { recordEvent } from '../events.js';
import type { SecretBox } from '../integrations/secret-box.js';
import { presentPagination } from '../pagination.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import {
  parseDelivery,
  type FeedCredentialsInput,
  type FeedDeliveryRecord,
  type PushDelivery,
} from './delivery-schemas.js';

/** DATA_DIR/deliveries: the files deliveries send, hard links kept until each ends. */
export function deliveriesDirectory(dataDir: string): string {
  return path.join(dataDir, 'deliveries');
}

export function presentDelivery(row: FeedDeliveryRow): FeedDeliveryRecord {
  return {
    id: row.id,
    feed_id: row.feed_id,
    type: row.type,
    status: row.status,
    products: row.products,
    bytes: row.bytes,
    sha256: row.sha256,
    reason: row.reason,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    error: row.error,
    remote: row.remote === null ? null : (JSON.parse(row.remote) as Record<string, unknown>),
    created_at: row.created_at,
  };
}

/** The file a generation published, as a delivery sends it. */
export interface GeneratedFile {
  /** The file to send (the .gz when the feed is gzipped). */
  path: string;
  /** Hex SHA-256 of the feed's content. */
  sha256: string;
  products: number;
}

/** Links (or, across devices, copies) the published file to the delivery's own name. */
async function keepFile(
  source: string,
  dir: string,
  id: string,
): Promise<{ name: string; bytes: number }> {
  await fs.promises.mkdir(dir, { recursive: true });
  const name = `${id}${path.extname(source) === '.gz' ? '.gz' : ''}`;
  const target = path.join(dir, name);
  try {
    await fs.promises.link(source, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.promises.copyFile(source, target);
  }
  return { name, bytes: (await fs.promises.stat(target)).size };
}

async function dropFile(dir: string, name: string | null): Promise<void> {
  if (name === null) return;
  await fs.promises.rm(path.join(dir, name), { force: true });
}

/** Whether a delivery went where the feed now delivers (a new target gets everything anew). */
function sameTarget(row: FeedDeliveryRow, delivery: PushDelivery): boolean {
  if (row.remote === null) return false;
  const remote = JSON.parse(row.remote) as Record<string, unknown>;
  if (delivery.type === 'acp_feed_api') {
    return remote.url === delivery.url && remote.feed_id === delivery.feed_id;
  }
  if (delivery.type === 'stripe') {
    return remote.api_url === delivery.api_url && remote.mode === delivery.mode;
  }
  return (
    remote.host === delivery.host && remote.port === delivery.port && remote.path === delivery.path
  );
}

/**
 * Records one generation's delivery for a feed with a push delivery (nothing for hosted):
 * skipped, held or pending (see the module comment); `force` sends regardless. Older
 * deliveries still waiting are superseded (skipped): only the newest content is sent.
 */
export async function planDelivery(
  db: Db,
  feed: FeedRow,
  file: GeneratedFile,
  dataDir: string,
  now: Date,
  options: {
    force?: boolean;
    /** Record a pending delivery as delivering, leased to the caller, who sends it (the CLI). */
    claim?: DeliveryLease;
  } = {},
): Promise<FeedDeliveryRow | undefined> {
  const delivery = parseDelivery(feed.delivery);
  if (delivery.type === 'hosted') return undefined;
  const dir = deliveriesDirectory(dataDir);
  const id = newSortableId('fdl', 16, now.getTime());
  const delivered = await findLastDelivered(db, feed.id);
  const last = delivered && sameTarget(delivered, delivery) ? delivered : undefined;
  let status: FeedDeliveryRow['status'] = 'pending';
  let reason: string | null = null;
  if (!options.force && last?.sha256 === file.sha256) {
    status = 'skipped';
    reason = `identical to the last delivered (${last.id})`;
  } else if (
    !options.force &&
    last !== undefined &&
    file.products < last.products * (1 - delivery.max_drop)
  ) {
    status = 'held';
    reason = `products fell from ${last.products} to ${file.products}, more than max_drop (${delivery.max_drop}) below the last delivered; POST .../release sends it`;
  }
  const kept =
    status === 'skipped'
      ? { name: null, bytes: (await fs.promises.stat(file.path)).size }
      : await keepFile(file.path, dir, id);
  const stamp = now.toISOString();
  const claimed = status === 'pending' ? options.claim : undefined;
  const row: FeedDeliveryRow = {
    id,
    feed_id: feed.id,
    type: delivery.type,
    status: claimed ? 'delivering' : status,
    products: file.products,
    bytes: kept.bytes,
    sha256: file.sha256,
    file: kept.name,
    reason,
    attempts: 0,
    next_attempt_at: null,
    started_at: claimed ? stamp : null,
    finished_at: status === 'skipped' ? stamp : null,
    error: null,
    remote: null,
    claimed_by: claimed?.owner ?? null,
    claimed_until: claimed?.until ?? null,
    created_at: stamp,
  };
  const superseded: (string | null)[] = [];
  try {
    await withTransaction(db, async (trx) => {
      if (status !== 'skipped') {
        for (const old of await listWaitingDeliveries(trx, feed.id, stamp)) {
          await updateFeedDelivery(trx, old.id, {
            status: 'skipped',
            reason: `superseded by ${id}`,
            next_attempt_at: null,
            finished_at: stamp,
            file: null,
          });
          superseded.push(old.file);
        }
      }
      await insertFeedDelivery(trx, row);
      if (status === 'held')
        await recordEvent(trx, 'feed.delivery_held', presentDelivery(row), now);
    });
  } catch (err) {
    await dropFile(dir, kept.name);
    throw err;
  }
  for (const name of superseded) await dropFile(dir, name);
  return row;
}

/** A page of a feed's deliveries, newest first; `status` keeps those in one state. */
export async function listDeliveries(
  db: Db,
  feedId: string,
  query: { limit: number; offset: number; status?: FeedDeliveryStatus | undefined },
) {
  if (!(await findFeedById(db, feedId))) throw notFound('feed', feedId);
  const { limit, offset, ...filter } = query;
  const page = { limit, offset };
  const rows = await listFeedDeliveryRows(db, feedId, filter, page);
  const total = await countFeedDeliveries(db, feedId, filter);
  return {
    deliveries: rows.map(presentDelivery),
    pagination: presentPagination(page, rows.length, total),
  };
}

/** Releases a held delivery: it becomes pending and is sent (409 when it is not held). */
export async function releaseDelivery(
  db: Executor,
  feedId: string,
  id: string,
): Promise<FeedDeliveryRecord> {
  return withTransaction(db, async (trx) => {
    const row = await findFeedDelivery(trx, feedId, id);
    if (!row) throw notFound('delivery', id);
    if (row.status !== 'held') {
      throw new AppError('conflict', `Delivery '${id}' is ${row.status}, not held.`, {
        field: 'status',
        reason: `${row.status}, not held`,
      });
    }
    await updateFeedDelivery(trx, id, { status: 'pending' });
    return presentDelivery({ ...row, status: 'pending' });
  });
}

/** What a transport gets to send one file. */
export interface TransportRequest {
  file: string;
  bytes: number;
  delivery: PushDelivery;
  credentials: FeedCredentialsInput;
  allowPrivate: boolean;
  /** The longest to wait on the remote's processing of the file (FEED_DELIVERY_WAIT_SECONDS). */
  waitMs: number;
  onProgress?: (sent: number, total: number) => void;
}

/** One delivery type's way to the remote: resolves with what the remote answered. */
export type DeliveryTransport = (request: TransportRequest) => Promise<Record<string, unknown>>;

/**
 * What the remote says now of a delivery it took (a Stripe import that ends after the
 * delivery was recorded): the delivery's `remote`, brought up to date.
 */
export type RemoteReader = (request: {
  delivery: PushDelivery;
  credentials: FeedCredentialsInput;
  remote: Record<string, unknown>;
  allowPrivate: boolean;
}) => Promise<Record<string, unknown>>;

export interface DeliveryEnv {
  db: Db;
  box: SecretBox;
  transports: Readonly<Record<string, DeliveryTransport>>;
  /** The delivery types whose remote can be read again after the fact, by type. */
  remoteReaders?: Readonly<Record<string, RemoteReader>>;
  logger: Logger;
  now: () => Date;
  dataDir: string;
  allowPrivate: boolean;
  /** Seconds before each retry: a failure after the last one is final. */
  retrySchedule: readonly number[];
  /**
   * How long a claimed delivery stays with its runner (renewed while it sends): after its
   * process dies, another runner retakes it once this has passed (FEED_DELIVERY_LEASE_MS).
   */
  leaseMs: number;
  /** The longest a transport waits on the remote's processing (default 10 minutes). */
  waitMs?: number;
}

/** How often the serve worker looks for due deliveries. */
const POLL_MS = 500;

/** Why a send failed, in a line (a transport's error, or the guard's refusal). */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sends deliveries: the due ones on each pass of the serve worker, or one at once
 * (`agentshelf feeds deliver`). Each is claimed first with a lease the runner renews while it
 * sends, so two runners never send one at once; a delivery whose runner died mid-send is
 * retaken once its lease lapses.
 */
export class DeliveryRunner {
  private readonly poller: PollingWorker;
  /** This runner's lease token: host, pid (a killed process's is known gone) and a random. */
  readonly owner = `${os.hostname()}/${process.pid}/${randomBase62(10)}`;

  constructor(readonly env: DeliveryEnv) {
    this.poller = new PollingWorker({
      tick: () => this.runDue(),
      intervalMs: POLL_MS,
      onError: (err) => env.logger.error({ err }, 'feed deliveries: a pass failed'),
    });
  }

  /** Sends due deliveries in the background (serve): every POLL_MS, and at once on nudge(). */
  start(): void {
    this.poller.start();
  }

  nudge(): void {
    this.poller.nudge();
  }

  /** Stops after the send under way. */
  stop(): Promise<void> {
    return this.poller.stop();
  }

  /** One pass over the due deliveries; resolves true when there may be more. */
  async runDue(limit = 10): Promise<boolean> {
    const due = await listDueDeliveries(this.env.db, this.env.now().toISOString(), limit);
    for (const row of due) await this.deliver(row);
    return due.length === limit;
  }

  /** A lease for this runner from now, for leaseMs. */
  lease(): DeliveryLease {
    const now = this.env.now();
    return {
      owner: this.owner,
      now: now.toISOString(),
      until: new Date(now.getTime() + this.env.leaseMs).toISOString(),
    };
  }

  /**
   * Sends one delivery that is due (pending, failed and due, or left mid-send by a runner
   * whose lease lapsed), claiming it first; `claimed` when this runner's planDelivery already
   * leased it. Answers its record after the attempt, or undefined when another runner holds
   * it (or retook it after this runner's lease lapsed).
   */
  async deliver(
    row: FeedDeliveryRow,
    options: { claimed?: boolean; onProgress?: (sent: number, total: number) => void } = {},
  ): Promise<FeedDeliveryRecord | undefined> {
    const { db, now, logger } = this.env;
    const started = now();
    if (!options.claimed && !(await claimFeedDelivery(db, row.id, this.lease()))) return undefined;
    // Renewed while it sends: the lease lapses only when this process stops.
    const renewal = setInterval(
      () => {
        renewFeedDeliveryLease(db, row.id, this.owner, this.lease().until).catch((err: unknown) =>
          logger.warn({ err, delivery_id: row.id }, 'feed delivery: renewing its lease failed'),
        );
      },
      Math.max(50, Math.floor(this.env.leaseMs / 3)),
    );
    let outcome: Awaited<ReturnType<DeliveryRunner['attempt']>>;
    try {
      outcome = await this.attempt(row, options.onProgress);
    } finally {
      clearInterval(renewal);
    }
    const attempts = row.attempts + 1;
    const { patch, event } = outcome;
    const finished: FeedDeliveryRow = {
      ...row,
      ...patch,
      attempts,
      started_at: started.toISOString(),
      claimed_by: null,
      claimed_until: null,
    };
    finished.finished_at = now().toISOString();
    const recorded = await withTransaction(db, async (trx) => {
      const mine = await finishFeedDelivery(trx, row.id, this.owner, {
        ...patch,
        attempts,
        finished_at: finished.finished_at,
      });
      if (mine) await recordEvent(trx, event, presentDelivery(finished), now());
      return mine;
    });
    if (!recorded) {
      logger.warn({ delivery_id: row.id }, 'feed delivery: lease lapsed mid-send; retaken');
      return undefined;
    }
    if (finished.file === null) await dropFile(deliveriesDirectory(this.env.dataDir), row.file);
    return presentDelivery(finished);
  }

  /** A feed's delivery credentials, decrypted ({} when it has none). */
  credentialsOf(feed: FeedRow): FeedCredentialsInput {
    return feed.credentials
      ? (JSON.parse(this.env.box.decrypt(feed.credentials)) as FeedCredentialsInput)
      : {};
  }

  /**
   * Reads again what the remote says of a delivery it took, and keeps it in the record's
   * `remote` (the status stays as the attempt left it). Undefined when the feed's delivery
   * type has no reader or the delivery reached no remote.
   */
  async refreshRemote(
    feed: FeedRow,
    row: FeedDeliveryRow,
  ): Promise<Record<string, unknown> | undefined> {
    const delivery = parseDelivery(feed.delivery);
    if (delivery.type === 'hosted' || row.remote === null) return undefined;
    const read = this.env.remoteReaders?.[delivery.type];
    if (!read) return undefined;
    const remote = await read({
      delivery,
      credentials: this.credentialsOf(feed),
      remote: JSON.parse(row.remote) as Record<string, unknown>,
      allowPrivate: this.env.allowPrivate,
    });
    await updateFeedDelivery(this.env.db, row.id, { remote: JSON.stringify(remote) });
    return remote;
  }

  /** One attempt to send a claimed delivery: the row's patch and the event it makes. */
  private async attempt(
    row: FeedDeliveryRow,
    onProgress?: (sent: number, total: number) => void,
  ): Promise<{
    patch: Partial<FeedDeliveryRow>;
    event: 'feed.delivered' | 'feed.delivery_failed';
  }> {
    const { db, now, logger } = this.env;
    try {
      const feed = await findFeedById(db, row.feed_id);
      if (!feed || row.file === null) throw new Error('the feed or its file is gone');
      const delivery = parseDelivery(feed.delivery);
      if (delivery.type === 'hosted') throw new Error('the feed is hosted now');
      const transport = this.env.transports[delivery.type];
      if (!transport) throw new Error(`no transport for ${delivery.type}`);
      const credentials = this.credentialsOf(feed);
      const remote = await transport({
        file: path.join(deliveriesDirectory(this.env.dataDir), row.file),
        bytes: row.bytes,
        delivery,
        credentials,
        allowPrivate: this.env.allowPrivate,
        waitMs: this.env.waitMs ?? 600_000,
        ...(onProgress ? { onProgress } : {}),
      });
      return {
        patch: { status: 'delivered', remote: JSON.stringify(remote), error: null, file: null },
        event: 'feed.delivered',
      };
    } catch (err) {
      const wait = this.env.retrySchedule[row.attempts];
      const next = wait === undefined ? null : new Date(now().getTime() + wait * 1000);
      logger.warn({ err, delivery_id: row.id, feed_id: row.feed_id }, 'feed delivery failed');
      return {
        patch: {
          status: 'failed',
          error: messageOf(err).slice(0, 1000),
          next_attempt_at: next?.toISOString() ?? null,
          ...(next === null ? { file: null } : {}),
        },
        event: 'feed.delivery_failed',
      };
    }
  }
}
