import type { IntegrationRow, IntegrationRowUpdate, SyncRunStatus } from '../../db/schema.js';
import {
  countIntegrations,
  countSyncRuns,
  deleteIntegrationRow,
  findIntegrationById,
  findLatestSync,
  findRunningSync,
  insertIntegration,
  listIntegrationRows,
  listSyncRunRows,
  updateIntegrationRow,
} from '../../db/queries/integrations.js';
import { lockCatalogueWrites } from '../../db/queries/products.js';
import { dialectOf } from '../../db/dialect.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordEvent } from '../events.js';
import { presentPagination } from '../pagination.js';
import {
  credentialsOf,
  encryptCredentials,
  openSourceContext,
  sourceOf,
  testSignal,
  type IntegrationEnv,
} from './runtime.js';
import {
  checkSettings,
  CREDENTIAL_KEYS,
  type Integration,
  type IntegrationCreateInput,
  type IntegrationTestResult,
  type IntegrationUpdateInput,
  type Platform,
  type SyncRun,
} from './schemas.js';
import { failureMessage, findIntegration, presentIntegration, presentSyncRun } from './present.js';
import { guardTargets, targetsOf } from './targets.js';
import { recoverInterruptedSyncs } from './sync.js';

/** At most this many integrations per store. */
export const MAX_INTEGRATIONS = 100;

async function present(db: Executor, row: IntegrationRow): Promise<Integration> {
  return presentIntegration(row, (await findRunningSync(db, row.id)) !== undefined);
}

function checkCredentials(
  platform: Platform,
  credentials: Record<string, string> | null | undefined,
) {
  if (!credentials) return;
  const allowed = CREDENTIAL_KEYS[platform];
  for (const key of Object.keys(credentials)) {
    if (!allowed.includes(key)) {
      throw new AppError('validation', `Unknown field 'credentials.${key}' for ${platform}.`, {
        field: `credentials.${key}`,
        reason: `is not a ${platform} credential (${allowed.join(', ')})`,
      });
    }
  }
  const has = (k: string) => credentials[k] !== undefined;
  if (platform === 'shopify' && has('client_id') !== has('client_secret') && !has('access_token')) {
    const missing = has('client_id') ? 'client_secret' : 'client_id';
    throw new AppError('missing_field', `credentials.${missing} is required with the other.`, {
      field: `credentials.${missing}`,
      reason: 'is required with client_id and client_secret',
    });
  }
  if (platform === 'woocommerce' && (has('consumer_key') || has('consumer_secret'))) {
    for (const k of ['consumer_key', 'consumer_secret']) {
      if (!has(k)) {
        throw new AppError('missing_field', `credentials.${k} is required.`, {
          field: `credentials.${k}`,
          reason: 'is required with the other consumer credential',
        });
      }
    }
  }
}

/**
 * A feed URL's user name and password (`https://user:pass@host/feed.csv`), taken out: the
 * settings keep the URL without them, as written otherwise, and the credentials get them as
 * the feed's HTTP Basic user name and password (to be encrypted with the rest).
 */
export function takeUrlCredentials(settings: Record<string, unknown>): {
  settings: Record<string, unknown>;
  basic: { username: string; password: string } | undefined;
} {
  const raw = settings.url;
  if (typeof raw !== 'string') return { settings, basic: undefined };
  const match = /^(https?:\/\/)([^/?#]*)@/i.exec(raw);
  if (!match) return { settings, basic: undefined };
  const userinfo = match[2]!;
  const colon = userinfo.indexOf(':');
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const basic = {
    username: decode(colon === -1 ? userinfo : userinfo.slice(0, colon)),
    password: decode(colon === -1 ? '' : userinfo.slice(colon + 1)),
  };
  return { settings: { ...settings, url: match[1]! + raw.slice(match[0].length) }, basic };
}

/** Credentials with a URL's user name and password in them (refused when they also give some). */
function withBasic(
  credentials: Record<string, string> | null | undefined,
  basic: { username: string; password: string },
  given: boolean,
): Record<string, string> {
  if (
    given &&
    credentials &&
    (credentials.username !== undefined || credentials.password !== undefined)
  ) {
    throw new AppError(
      'invalid_field',
      'settings.url carries a user name and password, and credentials give them too: give them once.',
      {
        field: 'settings.url',
        reason: 'carries a user name and password that credentials also give',
      },
    );
  }
  return { ...(credentials ?? {}), ...basic };
}

function shopDomainOf(
  platform: Platform,
  given: string | undefined,
  settings: Record<string, unknown>,
) {
  if (given) return given;
  if (platform === 'feed' && typeof settings.url === 'string') return new URL(settings.url).host;
  throw new AppError('missing_field', 'shop_domain is required.', {
    field: 'shop_domain',
    reason: 'is required',
  });
}

/**
 * Connects a platform: checks the fields and the targets (SSRF guard), encrypts the
 * credentials, and records integration.connected with the new integration.
 */
export async function createIntegration(
  env: IntegrationEnv,
  db: Executor,
  input: IntegrationCreateInput,
): Promise<Integration> {
  if (input.platform === 'feed' && typeof input.settings?.url !== 'string') {
    throw new AppError('missing_field', 'settings.url is required for a feed.', {
      field: 'settings.url',
      reason: 'is required for platform feed',
    });
  }
  checkSettings(input.platform, input.settings ?? {});
  const { settings, basic } = takeUrlCredentials(input.settings ?? {});
  checkCredentials(input.platform, input.credentials);
  const credentials = basic ? withBasic(input.credentials, basic, true) : input.credentials;
  const shopDomain = shopDomainOf(input.platform, input.shop_domain, settings);
  await guardTargets(targetsOf(input.platform, shopDomain, settings), env.allowPrivate);
  const now = env.now();
  const stamp = now.toISOString();
  const row: IntegrationRow = {
    id: newId('int'),
    platform: input.platform,
    shop_domain: shopDomain,
    status: 'connected',
    settings: JSON.stringify(settings),
    credentials: encryptCredentials(env, credentials),
    state: '{}',
    last_sync_at: null,
    last_error: null,
    product_count: 0,
    created_at: stamp,
    updated_at: stamp,
  };
  return withTransaction(db, async (trx) => {
    // The count decides: no other integration is added until this one commits.
    await dialectOf(trx).lockTableWrites(trx, 'integrations');
    if ((await countIntegrations(trx)) >= MAX_INTEGRATIONS) {
      throw new AppError('conflict', `A store has at most ${MAX_INTEGRATIONS} integrations.`, {
        field: 'platform',
        reason: `at most ${MAX_INTEGRATIONS} integrations`,
      });
    }
    await insertIntegration(trx, row);
    const integration = presentIntegration(row);
    await recordEvent(trx, 'integration.connected', integration, now);
    return integration;
  });
}

export async function listIntegrations(
  db: Executor,
  page: { limit: number; offset: number },
): Promise<{ integrations: Integration[]; pagination: ReturnType<typeof presentPagination> }> {
  const rows = await listIntegrationRows(db, page);
  const total = await countIntegrations(db);
  const integrations: Integration[] = [];
  for (const row of rows) integrations.push(await present(db, row));
  return { integrations, pagination: presentPagination(page, rows.length, total) };
}

export async function getIntegration(db: Executor, id: string): Promise<Integration> {
  return present(db, await findIntegration(db, id));
}

/**
 * Changes shop_domain, settings (replaced whole), credentials (replaced whole; null removes
 * them) or status (disconnected pauses the schedule; connected resumes it), with the event of
 * a status change.
 */
export async function updateIntegration(
  env: IntegrationEnv,
  db: Executor,
  id: string,
  input: IntegrationUpdateInput,
): Promise<Integration> {
  const before = await findIntegration(db, id);
  const given = input.settings ?? (JSON.parse(before.settings) as Record<string, unknown>);
  if (before.platform === 'feed' && typeof given.url !== 'string') {
    throw new AppError('missing_field', 'settings.url is required for a feed.', {
      field: 'settings.url',
      reason: 'is required for platform feed',
    });
  }
  if (input.settings !== undefined) checkSettings(before.platform, input.settings);
  const { settings, basic } = takeUrlCredentials(given);
  const shopDomain = input.shop_domain ?? before.shop_domain;
  if (input.credentials !== undefined) checkCredentials(before.platform, input.credentials);
  let credentials = input.credentials;
  if (basic && input.settings !== undefined) {
    // Into the credentials given, or else the ones kept (the URL's replace their user name
    // and password).
    credentials =
      input.credentials !== undefined
        ? withBasic(input.credentials, basic, true)
        : withBasic(credentialsOf(env, before), basic, false);
  }
  if (input.shop_domain !== undefined || input.settings !== undefined) {
    await guardTargets(targetsOf(before.platform, shopDomain, settings), env.allowPrivate);
  }
  const now = env.now();
  const patch: IntegrationRowUpdate = {};
  if (input.shop_domain !== undefined) patch.shop_domain = shopDomain;
  if (input.settings !== undefined) patch.settings = JSON.stringify(settings);
  if (credentials !== undefined) patch.credentials = encryptCredentials(env, credentials);
  if (input.status !== undefined && input.status !== before.status) patch.status = input.status;
  if (Object.keys(patch).length === 0) return present(db, before);
  patch.updated_at = now.toISOString();
  if (patch.status === 'connected') patch.last_error = null;
  return withTransaction(db, async (trx) => {
    // The events follow the status as it is now, not as read before the checks.
    const current = (await findIntegrationById(trx, id, true)) ?? before;
    await updateIntegrationRow(trx, id, patch);
    const integration = await present(trx, { ...current, ...patch } as IntegrationRow);
    if (patch.status === 'connected')
      await recordEvent(trx, 'integration.connected', integration, now);
    if (patch.status === 'disconnected' && current.status === 'connected') {
      await recordEvent(trx, 'integration.disconnected', integration, now);
    }
    return integration;
  });
}

/**
 * Removes the integration, its mapping and history. Its products stay (a merchant deletes
 * products through the products API). 409 while a sync runs.
 */
export async function deleteIntegration(
  env: IntegrationEnv,
  db: Executor,
  id: string,
): Promise<void> {
  const row = await findIntegration(db, id);
  await recoverInterruptedSyncs(env, id);
  await withTransaction(db, async (trx) => {
    // Its mappings go with it (the catalogue's lock first, as a sync takes them), and no sync
    // starts meanwhile (a start locks the integration's row).
    await lockCatalogueWrites(trx);
    if (!(await findIntegrationById(trx, id, true))) throw notFound('integration', id);
    if (await findRunningSync(trx, id)) {
      throw new AppError(
        'conflict',
        'A sync of this integration is running; delete it once the sync has finished.',
        {
          field: 'id',
          reason: 'a sync is running',
        },
      );
    }
    const integration = presentIntegration(row);
    await deleteIntegrationRow(trx, id);
    await recordEvent(trx, 'integration.disconnected', integration, env.now());
  });
}

/**
 * Connects and reads the least that proves settings and credentials work. A success makes the
 * integration connected (integration.connected when it was not); a failure makes it `error`
 * (integration.disconnected when it was connected). Always 200: the outcome is in the answer.
 */
export async function testIntegration(
  env: IntegrationEnv,
  db: Executor,
  id: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<IntegrationTestResult> {
  const row = await findIntegration(db, id);
  let ok: boolean;
  let message: string;
  try {
    await guardTargets(
      targetsOf(row.platform, row.shop_domain, JSON.parse(row.settings) as Record<string, unknown>),
      env.allowPrivate,
    );
    const { ctx } = openSourceContext(env, row, testSignal(env, signal));
    ({ ok, message } = await sourceOf(env, row.platform).test(ctx));
  } catch (err) {
    ok = false;
    message = failureMessage(err);
  }
  const now = env.now();
  const status = ok ? 'connected' : 'error';
  const integration = await withTransaction(db, async (trx) => {
    const current = (await findIntegrationById(trx, id, true)) ?? row;
    const patch: IntegrationRowUpdate = {
      last_error: ok ? null : message,
      updated_at: now.toISOString(),
    };
    // A merchant's pause holds: a test does not resume the schedule.
    if (current.status !== 'disconnected') patch.status = status;
    await updateIntegrationRow(trx, id, patch);
    const after = await present(trx, { ...current, ...patch } as IntegrationRow);
    if (patch.status === 'connected' && current.status !== 'connected') {
      await recordEvent(trx, 'integration.connected', after, now);
    }
    if (patch.status === 'error' && current.status === 'connected') {
      await recordEvent(trx, 'integration.disconnected', after, now);
    }
    return after;
  });
  return {
    status: ok ? 'success' : 'failure',
    message,
    details: {
      connection_status: integration.status,
      sync_status: integration.sync_status,
      product_count: integration.product_count,
      last_sync: integration.last_sync,
    },
  };
}

/** A page of an integration's syncs, newest first; `status` keeps those in one state. */
export async function syncHistory(
  db: Executor,
  id: string,
  query: { limit: number; offset: number; status?: SyncRunStatus | undefined },
): Promise<{ syncs: SyncRun[]; pagination: ReturnType<typeof presentPagination> }> {
  await findIntegration(db, id);
  const { limit, offset, ...filter } = query;
  const page = { limit, offset };
  const rows = await listSyncRunRows(db, id, filter, page);
  const total = await countSyncRuns(db, id, filter);
  return {
    syncs: rows.map(presentSyncRun),
    pagination: presentPagination(page, rows.length, total),
  };
}

export async function syncStatus(db: Executor, id: string) {
  await findIntegration(db, id);
  const running = await findRunningSync(db, id);
  const last = await findLatestSync(db, id);
  return {
    integration_id: id,
    status: running ? ('running' as const) : ('idle' as const),
    current: running ? presentSyncRun(running) : null,
    last: last && last.status !== 'running' ? presentSyncRun(last) : await lastFinished(db, id),
  };
}

async function lastFinished(db: Executor, id: string): Promise<SyncRun | null> {
  const rows = await listSyncRunRows(db, id, {}, { limit: 2, offset: 0 });
  const row = rows.find((r) => r.status !== 'running');
  return row ? presentSyncRun(row) : null;
}
