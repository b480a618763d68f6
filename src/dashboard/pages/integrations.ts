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
import { IntegrationCreate, PLATFORMS, type SyncRun } from '../../domain/integrations/schemas.js';
import type { SyncRunner } from '../../domain/integrations/sync.js';
import {
  IntegrationListQueryString,
  SyncHistoryQueryString,
} from '../../http/schemas/integrations.js';
import { parseInput } from '../../http/validate.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, table, type Viewer } from '../layout.js';
import type { Formatter } from '../format.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/integrations';
const intPath = (id: string) => `${PATH}/${encodeURIComponent(id)}`;

function runnerOf(dash: DashContext): SyncRunner {
  if (!dash.deps.integrations) {
    throw new AppError('unavailable', 'Integrations are not running in this process.');
  }
  return dash.deps.integrations;
}

/** The credential fields of the form, by platform (empty ones are left out). */
const CREDENTIAL_FIELDS: [string, string, string][] = [
  ['access_token', 'Shopify Admin API access token', 'shopify'],
  ['consumer_key', 'WooCommerce consumer key', 'woocommerce'],
  ['consumer_secret', 'WooCommerce consumer secret', 'woocommerce'],
  ['token', 'Feed bearer token (optional)', 'feed'],
];

function connectForm(viewer: Viewer, values: Record<string, string>, error?: AppError): Html {
  const errorOf = (name: string) =>
    error && (error.field === name || error.field?.startsWith(`${name}.`))
      ? error.message
      : undefined;
  const shown = ['platform', 'shop_domain', 'settings', 'credentials'];
  return markup`<form class="box" method="post" action="${PATH}" novalidate>
    ${csrfField(viewer)}
    <h2>Connect a store</h2>
    ${error && !shown.some((n) => errorOf(n)) ? markup`<div class="error" role="alert">${error.message}</div>` : ''}
    ${field({ name: 'platform', label: 'Platform', value: values.platform ?? 'feed', options: PLATFORMS, error: errorOf('platform') })}
    ${field({ name: 'url', label: 'Feed URL (platform feed)', value: values.url, error: errorOf('settings'), hint: 'A CSV, JSON or XML product feed: https://shop.example.com/feeds/products.csv' })}
    ${field({ name: 'shop_domain', label: 'Shop domain (Shopify, WooCommerce)', value: values.shop_domain, error: errorOf('shop_domain'), hint: 'your-store.myshopify.com or shop.example.com' })}
    ${CREDENTIAL_FIELDS.map(([name, label]) => field({ name, label, type: 'password', error: errorOf(`credentials.${name}`) ?? (name === 'access_token' ? errorOf('credentials') : undefined) }))}
    <button type="submit">Connect</button>
  </form>`;
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
  const q = parseInput(IntegrationListQueryString, { limit: '50', ...queryOf(ctx) }, 'query');
  const list = await listIntegrations(dash.deps.db, q);
  dash.render(
    'Integrations',
    PATH,
    markup`${canWrite(dash.viewer) ? connectForm(dash.viewer, extra.values ?? {}, extra.error) : ''}
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
      }`,
    status,
  );
}

async function renderIntegration(ctx: Koa.Context, dash: DashContext, notice?: Html) {
  const id = String(ctx.params.id);
  const i = await getIntegration(dash.deps.db, id);
  const status = await syncStatus(dash.deps.db, id);
  const q = parseInput(SyncHistoryQueryString, { limit: '20', ...queryOf(ctx) }, 'query');
  const history = await syncHistory(dash.deps.db, id, q);
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
      <h2>Sync history</h2>
      ${
        history.syncs.length === 0
          ? markup`<p>No sync yet.${write ? ' Press "Sync now".' : ''}</p>`
          : table(
              ['Started', 'State', 'Counts', 'Errors'],
              history.syncs.map((r) => runRow(r, dash.fmt)),
            )
      }
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
      const input: Record<string, unknown> = { platform: form.platform };
      if (form.shop_domain) input.shop_domain = form.shop_domain;
      if (form.url) input.settings = { url: form.url };
      const credentials: Record<string, string> = {};
      for (const [name, , platform] of CREDENTIAL_FIELDS) {
        if (form[name] && platform === form.platform) credentials[name] = form[name];
      }
      if (Object.keys(credentials).length > 0) input.credentials = credentials;
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
