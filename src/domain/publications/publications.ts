import type { Logger } from 'pino';
import type { Db } from '../../db/store.js';
import type { PublicationRow } from '../../db/schema.js';
import {
  countPublications,
  insertPublicationRow,
  interruptRunningPublications,
  listPublicationRows,
  selectDuePurges,
  updatePublicationRow,
  type PublicationListFilter,
} from '../../db/queries/publications.js';
import { withTransaction } from '../../db/transaction.js';
import { newSortableId } from '../../ids.js';
import { purgeUrlsOf, type Purger } from '../../publish/cdn.js';
import type { SyncReport } from '../../publish/s3.js';
import { recordEvent } from '../events.js';
import { presentPagination } from '../pagination.js';
import type { Publication } from './schemas.js';

/** How the changed URLs are purged after an upload (CDN_PURGE). */
export interface PurgeWiring {
  /** The provider's call; undefined for `webhook` (discovery.published through the outbox). */
  purger: Purger | undefined;
  feedsUrl: string;
  logger?: Pick<Logger, 'warn'> | undefined;
}

/** Attempts of one purge before it is left failed; the waits between them double from a minute. */
export const PURGE_ATTEMPTS = 8;
const PURGE_FIRST_WAIT_MS = 60_000;
const PURGE_MAX_WAIT_MS = 3_600_000;

/**
 * One attempt at a publication's purge; never throws (a failed purge never fails a publish):
 * the outcome is on the row, a failure retried from `purge_next_at` by retryDuePurges.
 */
async function attemptPurge(
  db: Db,
  id: string,
  urls: string[],
  attempts: number,
  wiring: PurgeWiring,
  now: () => Date,
): Promise<void> {
  const made = attempts + 1;
  try {
    if (wiring.purger) {
      await wiring.purger(urls);
      await updatePublicationRow(db, id, purged(made));
    } else {
      await withTransaction(db, async (trx) => {
        await recordEvent(trx, 'discovery.published', { publication_id: id, urls }, now());
        await updatePublicationRow(trx, id, purged(made));
      });
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    wiring.logger?.warn({ publication: id, attempts: made, err: message }, 'CDN purge failed');
    const wait = Math.min(PURGE_FIRST_WAIT_MS * 2 ** (made - 1), PURGE_MAX_WAIT_MS);
    await updatePublicationRow(db, id, {
      purge_status: made >= PURGE_ATTEMPTS ? 'failed' : 'pending',
      purge_attempts: made,
      purge_error: message,
      purge_next_at: made >= PURGE_ATTEMPTS ? null : new Date(now().getTime() + wait).toISOString(),
    }).catch(() => undefined);
  }
}

function purged(attempts: number) {
  return {
    purge_status: 'succeeded' as const,
    purge_attempts: attempts,
    purge_error: null,
    purge_next_at: null,
  };
}

/** Retries the purges that failed and are due again (each publication's own URLs). */
export async function retryDuePurges(
  db: Db,
  wiring: PurgeWiring,
  now: () => Date,
): Promise<number> {
  const due = await selectDuePurges(db, now().toISOString(), 50);
  for (const row of due) {
    const urls = JSON.parse(row.purge_urls ?? '[]') as string[];
    await attemptPurge(db, row.id, urls, Number(row.purge_attempts), wiring, now);
  }
  return due.length;
}

/**
 * Publications to object storage (CONTRACT part 12): each upload of the published tree is a
 * row, running until it ends; a failed one keeps its error (the next run uploads what is still
 * missing, since it diffs against the bucket). Called under the pipeline lock, so a row still
 * `running` when the next one starts belongs to a process that died.
 */
export async function recordPublication(
  db: Db,
  what: { target: string; trigger: string; now: () => Date; purge?: PurgeWiring | undefined },
  sync: (afterUpload?: (changed: string[]) => Promise<void>) => Promise<SyncReport>,
): Promise<SyncReport> {
  const startedAt = what.now().toISOString();
  await interruptRunningPublications(db, startedAt);
  const purge = what.purge;
  if (purge) await retryDuePurges(db, purge, what.now);
  const id = newSortableId('pub', 16, Date.parse(startedAt));
  await insertPublicationRow(db, {
    id,
    target: what.target,
    trigger: what.trigger,
    status: 'running',
    uploaded: 0,
    skipped: 0,
    deleted: 0,
    held: 0,
    bytes: 0,
    purge_attempts: 0,
    pid: process.pid,
    started_at: startedAt,
  });
  // Once the changed objects are in the bucket and before any deletion: the purge.
  const afterUpload = purge
    ? async (changed: string[]) => {
        const urls = purgeUrlsOf(changed, purge.feedsUrl);
        if (urls.length === 0) return;
        await updatePublicationRow(db, id, {
          purge_status: 'pending',
          purge_urls: JSON.stringify(urls),
        });
        await attemptPurge(db, id, urls, 0, purge, what.now);
      }
    : undefined;
  try {
    const report = await sync(afterUpload);
    await updatePublicationRow(db, id, {
      status: 'succeeded',
      uploaded: report.uploaded,
      skipped: report.skipped,
      deleted: report.deleted,
      held: report.held,
      bytes: report.bytes,
      error: report.held
        ? `${report.held} deletions held: more than PUBLISH_MAX_DELETES or half the bucket; run agentshelf publish --force`
        : null,
      finished_at: what.now().toISOString(),
    });
    return report;
  } catch (err) {
    await updatePublicationRow(db, id, {
      status: 'failed',
      error: err instanceof Error ? err.message : String(err),
      finished_at: what.now().toISOString(),
    });
    throw err;
  }
}

export function presentPublication(row: PublicationRow): Publication {
  return {
    id: row.id,
    target: row.target,
    trigger: row.trigger,
    status: row.status,
    uploaded: Number(row.uploaded),
    skipped: Number(row.skipped),
    deleted: Number(row.deleted),
    held: Number(row.held),
    bytes: Number(row.bytes),
    error: row.error,
    purge_status: row.purge_status,
    purge_attempts: Number(row.purge_attempts),
    purge_error: row.purge_error,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

export async function listPublications(
  db: Db,
  filter: PublicationListFilter,
  page: { limit: number; offset: number },
) {
  const rows = await listPublicationRows(db, filter, page);
  const total = await countPublications(db, filter);
  return {
    publications: rows.map(presentPublication),
    pagination: presentPagination(page, rows.length, total),
  };
}
