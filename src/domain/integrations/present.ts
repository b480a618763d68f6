import type { IntegrationRow, SyncRunRow } from '../../db/schema.js';
import { findIntegrationById } from '../../db/queries/integrations.js';
import type { Executor } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import type { Integration, SyncError, SyncRun } from './schemas.js';
import { SourceError } from './source.js';

/**
 * Settings as shown: a URL's user name and password never (an integration stored before
 * they were moved into the credentials at the door still has them in its settings).
 */
function shownSettings(stored: string): Record<string, never> {
  const settings = JSON.parse(stored) as Record<string, unknown>;
  if (typeof settings.url === 'string')
    settings.url = settings.url.replace(/^(https?:\/\/)[^/?#]*@/i, '$1');
  return settings as Record<string, never>;
}

export function presentIntegration(row: IntegrationRow, running = false): Integration {
  return {
    id: row.id,
    platform: row.platform,
    shop_domain: row.shop_domain,
    status: row.status,
    settings: shownSettings(row.settings),
    credentials_set: row.credentials !== null,
    last_sync: row.last_sync_at,
    last_error: row.last_error,
    product_count: Number(row.product_count),
    sync_status: running ? 'running' : 'idle',
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentSyncRun(row: SyncRunRow): SyncRun {
  return {
    id: row.id,
    integration_id: row.integration_id,
    status: row.status,
    trigger: row.trigger,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
    fetched: Number(row.fetched),
    created: Number(row.created),
    updated: Number(row.updated),
    unchanged: Number(row.unchanged),
    deactivated: Number(row.deactivated),
    failed: Number(row.failed),
    errors: JSON.parse(row.errors) as SyncError[],
    error: row.error,
  };
}

export async function findIntegration(db: Executor, id: string): Promise<IntegrationRow> {
  const row = await findIntegrationById(db, id);
  if (!row) throw notFound('integration', id);
  return row;
}

/** What went wrong, in words for a merchant (never a stack or a secret). */
export function failureMessage(err: unknown): string {
  if (err instanceof SourceError) return err.message;
  if (err instanceof AppError) return err.message;
  if (err instanceof Error && (err.name === 'HttpError' || err.name === 'SecretKeyError'))
    return err.message;
  return 'unexpected error while reading the platform (see the server log)';
}
