import type Koa from 'koa';
import { AppError } from '../../errors.js';
import {
  createIntegration,
  getIntegration,
  listIntegrations,
  syncHistory,
  syncStatus,
  testIntegration,
} from '../../domain/integrations/integrations.js';
import {
  FEED_SETTING_FORMATS,
  IntegrationCreate,
  SYNC_STATUSES,
  type Platform,
  type SyncRun,
} from '../../domain/integrations/schemas.js';
import type { SyncRunner } from '../../domain/integrations/sync.js';
import {
  IntegrationListQueryString,
  SyncHistoryQueryString,
} from '../../http/schemas/integrations.js';
import { parseInput } from '../../http/validate.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, pageLink, table, type Viewer } from '../layout.js';
import type { Formatter } from '../format.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/integrations';
const intPath = (id: string) => `${PATH}/${encodeURIComponent(id)}`;
/** Syncs listed per page of an integration's history. */
const SYNCS_PER_PAGE = 20;

function runnerOf(dash: DashContext): SyncRunner {
  if (!dash.deps.integrations) {
    throw new AppError('unavailable', 'Integrations are not running in this process.');
  }
  return dash.deps.integrations;
}

/** A field of a platform's connect form: its form name, label, and where it goes. */
interface ConnectField {
  name: string;
  label: string;
  kind: 'credential' | 'setting' | 'shop';
  type?: string;
  hint?: string;
  options?: readonly string[];
  emptyLabel?: string;
}

/**
 * One form per platform, each with only its own fields (no script switches them): the
 * credentials each platform takes (CONTRACT part 8) and the feed's settings. Secrets typed
 * into a form are never sent back with it.
 */
const CONNECT_FORMS: {
  platform: Platform;
  title: string;
  button: string;
  fields: ConnectField[];
}[] = [
  {
    platform: 'feed',
    title: 'A product feed (CSV, TSV, JSON, NDJSON or XML)',
    button: 'Connect the feed',
    fields: [
      {
        name: 'url',
        label: 'Feed URL',
        kind: 'setting',
        hint: 'https://shop.example.com/feeds/products.csv',
      },
      {
        name: 'format',
        label: 'Format',
        kind: 'setting',
        options: ['', ...FEED_SETTING_FORMATS],
        emptyLabel: '(from the file)',
      },
      {
        name: 'max_mb',
        label: 'Largest size read (MB, optional)',
        kind: 'setting',
        type: 'number',
      },
      { name: 'token', label: 'Bearer token (optional)', kind: 'credential', type: 'password' },
      { name: 'username', label: 'User name (optional, HTTP Basic)', kind: 'credential' },
      {
        name: 'password',
        label: 'Password (optional, HTTP Basic)',
        kind: 'credential',
        type: 'password',
      },
    ],
  },
  {
    platform: 'shopify',
    title: 'Shopify',
    button: 'Connect Shopify',
    fields: [
      {
        name: 'shop_domain',
        label: 'Shopify shop domain',
        kind: 'shop',
        hint: 'your-store.myshopify.com',
      },
      {
        name: 'access_token',
        label: 'Admin API access token',
        kind: 'credential',
        type: 'password',
        hint: 'Or, for an app with a client id and secret, the two fields below instead.',
      },
      { name: 'client_id', label: 'Client id', kind: 'credential' },
      { name: 'client_secret', label: 'Client secret', kind: 'credential', type: 'password' },
    ],
  },
  {
    platform: 'woocommerce',
    title: 'WooCommerce',
    button: 'Connect WooCommerce',
    fields: [
      { name: 'shop_domain', label: 'WooCommerce site', kind: 'shop', hint: 'shop.example.com' },
      { name: 'consumer_key', label: 'Consumer key', kind: 'credential', type: 'password' },
      { name: 'consumer_secret', label: 'Consumer secret', kind: 'credential', type: 'password' },
    ],
  },
];

/** Where the API names a form field's problem (`settings.url`, `credentials.token`, ...). */
function apiFieldOf(f: ConnectField): string {
  if (f.kind === 'shop') return 'shop_domain';
  if (f.kind === 'setting') return `settings.${f.name === 'max_mb' ? 'max_bytes' : f.name}`;
  return `credentials.${f.name}`;
}

function connectForms(viewer: Viewer, values: Record<string, string>, error?: AppError): Html {
  const known = CONNECT_FORMS.some((f) => f.platform === values.platform);
  return markup`<h2>Connect a store</h2>
    ${error && !known ? markup`<div class="error" role="alert">${error.message}</div>` : ''}
    ${CONNECT_FORMS.map((form) => {
      const mine = values.platform === form.platform;
      const errorOf = (f: ConnectField) => {
        if (!mine || !error?.field) return undefined;
        const named = apiFieldOf(f);
        if (error.field === named || error.field.startsWith(`${named}.`)) return error.message;
        // "credentials" or "settings" as a whole: shown at the form's first such field.
        const first = form.fields.find((g) => g.kind === f.kind);
        return first === f && named.startsWith(`${error.field}.`) ? error.message : undefined;
      };
      const placed = form.fields.some((f) => errorOf(f));
      return markup`<form class="box" method="post" action="${PATH}" novalidate>
        ${csrfField(viewer)}<input type="hidden" name="platform" value="${form.platform}" />
        <h3>${form.title}</h3>
        ${mine && error && !placed ? markup`<div class="error" role="alert">${error.message}</div>` : ''}
        ${form.fields.map((f) =>
          field({
            name: f.name,
            id: `${form.platform}-${f.name}`,
            label: f.label,
            value: f.kind === 'credential' || !mine ? undefined : values[f.name],
            error: errorOf(f),
            ...(f.type ? { type: f.type } : {}),
            ...(f.hint ? { hint: f.hint } : {}),
            ...(f.options ? { options: f.options } : {}),
            ...(f.emptyLabel ? { emptyLabel: f.emptyLabel } : {}),
          }),
        )}
        <button type="submit">${form.button}</button>
      </form>`;
    })}`;
}

/** The API's body for what one platform's form sent. */
function connectInput(form: Record<string, string>): Record<string, unknown> {
  const spec = CONNECT_FORMS.find((f) => f.platform === form.platform);
  if (!spec) return { platform: form.platform ?? '' };
  const input: Record<string, unknown> = { platform: spec.platform };
  const settings: Record<string, unknown> = {};
  const credentials: Record<string, string> = {};
  for (const f of spec.fields) {
    const value = form[f.name]?.trim() ? form[f.name]! : '';
    if (value === '') continue;
    if (f.kind === 'shop') input.shop_domain = value;
    else if (f.kind === 'credential') credentials[f.name] = value;
    else if (f.name === 'max_mb') {
      // Megabytes as typed; the API checks the bytes (a whole number in its range).
      const mb = Number(value);
      settings.max_bytes = Number.isFinite(mb) ? Math.round(mb * 1024 * 1024) : value;
    } else settings[f.name] = value;
  }
  if (Object.keys(settings).length > 0) input.settings = settings;
  if (Object.keys(credentials).length > 0) input.credentials = credentials;
  return input;
}

function runRow(r: SyncRun, fmt: Formatter): Html[] {
  return [
    markup`${fmt.when(r.started_at)}<br /><span class="muted">${r.trigger}</span>`,
    markup`${r.status}`,
    markup`${r.fetched} fetched: ${r.created} new, ${r.updated} updated, ${r.unchanged} unchanged,
    ${r.deactivated} deactivated, ${r.failed} failed`,
    r.error || r.errors.length > 0
      ? markup`${r.error ?? ''}${
          r.errors.length > 0
            ? markup`<ul>
                ${r.errors.slice(0, 10).map((e) => markup`<li>${e.external_id ?? '—'}: ${e.field} ${e.reason}</li>`)}
              </ul>`
            : ''
        }`
      : markup`—`,
  ];
}

/**
 * The last run, when it was held: what it would have changed and why, with a button that
 * applies it (a forced sync: it reads the source again and applies what it reads).
 */
function heldNotice(dash: DashContext, id: string, last: SyncRun | null, write: boolean): Html {
  if (!last || last.status !== 'held') return markup``;
  return markup`<div class="error" role="alert" id="sync-held">
    <p>
      <strong>The last sync was held; nothing was changed.</strong> ${last.error ?? ''}
    </p>
    <p>
      It read ${last.fetched} items and would have made ${last.created} new,
      ${last.updated} updated and ${last.deactivated} inactive (${last.failed} failed).
    </p>
    ${
      write
        ? markup`<form class="inline" method="post" action="${intPath(id)}/sync">
            ${csrfField(dash.viewer)}<input type="hidden" name="force" value="true" /><button
              type="submit"
            >
              Apply it (force a sync)
            </button>
          </form>`
        : ''
    }
  </div>`;
}

async function renderList(
  ctx: Koa.Context,
  dash: DashContext,
  extra: { values?: Record<string, string>; error?: AppError } = {},
  status = 200,
) {
  const query = queryOf(ctx);
  const q = parseInput(IntegrationListQueryString, { limit: '50', ...query }, 'query');
  const list = await listIntegrations(dash.deps.db, q);
  dash.render(
    'Integrations',
    PATH,
    markup`${canWrite(dash.viewer) ? connectForms(dash.viewer, extra.values ?? {}, extra.error) : ''}
      <h2>Connected stores</h2>
      ${
        list.integrations.length === 0
          ? markup`<div class="box">
              <p>
                No store
                connected.${canWrite(dash.viewer) ? ' Connect Shopify, WooCommerce or a product feed URL above: its products are synced into your catalogue.' : ''}
              </p>
            </div>`
          : table(
              ['Store', 'Platform', 'State', 'Products', 'Last sync'],
              list.integrations.map((i) => [
                markup`<a href="${intPath(i.id)}">${i.shop_domain}</a><br /><code class="muted"
                    >${i.id}</code
                  >`,
                i.platform,
                markup`${i.status}${i.sync_status === 'running' ? ' (syncing)' : ''}`,
                dash.fmt.number(i.product_count),
                dash.fmt.when(i.last_sync, 'never'),
              ]),
            )
      }
      ${listPager(list.pagination, { shown: list.integrations.length, pageSize: q.limit, link: (at) => pageLink(PATH, query, at), fmt: dash.fmt })}`,
    status,
  );
}

/** An integration's syncs, newest first, 20 a page, filtered by state. */
async function historySection(ctx: Koa.Context, dash: DashContext, id: string): Promise<Html> {
  // Only the list's own parameters (the page's address may carry others).
  const given = queryOf(ctx, ['status', 'offset']);
  const q = parseInput(
    SyncHistoryQueryString,
    { limit: String(SYNCS_PER_PAGE), ...given },
    'query',
  );
  const history = await syncHistory(dash.deps.db, id, q);
  const link = (at: number) => pageLink(intPath(id), given, at, '#syncs');
  return markup`<h2 id="syncs">Sync history</h2>
    <form class="box filters" method="get" action="${intPath(id)}#syncs">
      <div>
        ${field({ name: 'status', id: 'f-sync-status', label: 'State', value: q.status ?? '', options: ['', ...SYNC_STATUSES] })}
      </div>
      <div><button type="submit">Show</button></div>
    </form>
    ${
      history.syncs.length === 0
        ? markup`<p>
            ${q.status ? 'No sync in this state.' : `No sync yet.${canWrite(dash.viewer) ? ' Press "Sync now".' : ''}`}
          </p>`
        : table(
            ['Started', 'State', 'Counts', 'Errors'],
            history.syncs.map((r) => runRow(r, dash.fmt)),
          )
    }
    ${listPager(history.pagination, { shown: history.syncs.length, pageSize: SYNCS_PER_PAGE, link, fmt: dash.fmt })}`;
}

async function renderIntegration(ctx: Koa.Context, dash: DashContext, notice?: Html) {
  const id = String(ctx.params.id);
  const i = await getIntegration(dash.deps.db, id);
  const status = await syncStatus(dash.deps.db, id);
  const running = status.status === 'running';
  const write = canWrite(dash.viewer);
  const cur = status.current;
  dash.render(
    `${i.platform}: ${i.shop_domain}`,
    PATH,
    markup`${notice ?? ''}
      <div class="box">
        <dl>
          <dt>State</dt>
          <dd>
            ${i.status}${i.last_error ? markup` <span class="field-error">${i.last_error}</span>` : ''}
          </dd>
          <dt>Products</dt>
          <dd>${dash.fmt.number(i.product_count)}</dd>
          <dt>Last sync</dt>
          <dd>${dash.fmt.when(i.last_sync, 'never')}</dd>
          <dt>Credentials</dt>
          <dd>${i.credentials_set ? 'set (never shown)' : 'none'}</dd>
        </dl>
        ${
          running && cur
            ? markup`<p role="status" id="sync-progress">
                Syncing: ${cur.fetched} fetched, ${cur.created} new, ${cur.updated} updated so far.
                This page reloads every 2 seconds.
              </p>`
            : ''
        }
        ${heldNotice(dash, i.id, running ? null : status.last, write)}
        ${
          write
            ? markup`<form class="inline" method="post" action="${intPath(i.id)}/test">
                  ${csrfField(dash.viewer)}<button type="submit" class="secondary">
                    Test the connection
                  </button>
                </form>
                ${running ? '' : markup`<form class="inline" method="post" action="${intPath(i.id)}/sync">${csrfField(dash.viewer)}<button type="submit">Sync now</button></form>`}`
            : ''
        }
      </div>
      ${await historySection(ctx, dash, i.id)}
      <p><a href="${PATH}">All integrations</a></p>`,
    200,
    running ? 2 : undefined,
  );
}

export const integrationPages: DashRoute[] = [
  { method: 'get', path: PATH, permission: 'read', handler: (ctx, dash) => renderList(ctx, dash) },
  {
    method: 'post',
    path: PATH,
    permission: 'write',
    handler: async (ctx, dash) => {
      const { form } = dash;
      const input = connectInput(form);
      try {
        const body = parseInput(IntegrationCreate, input, 'body');
        const integration = await createIntegration(runnerOf(dash).env, dash.deps.db, body);
        ctx.status = 303;
        ctx.redirect(intPath(integration.id));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // Secrets typed into the form are never sent back.
        const values = {
          platform: form.platform ?? '',
          url: form.url ?? '',
          format: form.format ?? '',
          max_mb: form.max_mb ?? '',
          shop_domain: form.shop_domain ?? '',
        };
        await renderList(ctx, dash, { values, error: err }, 422);
      }
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id`,
    permission: 'read',
    handler: (ctx, dash) => renderIntegration(ctx, dash),
  },
  {
    method: 'post',
    path: `${PATH}/:id/test`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const result = await testIntegration(runnerOf(dash).env, dash.deps.db, String(ctx.params.id));
      await renderIntegration(
        ctx,
        dash,
        markup`<div class="${result.status === 'success' ? 'notice' : 'error'}" role="status">
          ${result.message}
        </div>`,
      );
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/sync`,
    permission: 'write',
    handler: async (ctx, dash) => {
      await runnerOf(dash).start(String(ctx.params.id), {
        trigger: 'api',
        ...(dash.form.force === 'true' ? { force: true } : {}),
      });
      ctx.status = 303;
      ctx.redirect(intPath(String(ctx.params.id)));
    },
  },
];
