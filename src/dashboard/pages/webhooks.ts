import type Koa from 'koa';
import { AppError } from '../../errors.js';
import { EVENT_TYPES } from '../../domain/events.js';
import {
  createWebhook,
  findWebhook,
  listDeliveries,
  listWebhooks,
  presentWebhook,
  updateWebhook,
} from '../../domain/webhooks/webhooks.js';
import {
  DELIVERY_STATUSES,
  TEST_EVENT_TYPE,
  WebhookCreate,
  WebhookUpdate,
} from '../../domain/webhooks/schemas.js';
import { DeliveryListQueryString, WebhookListQueryString } from '../../http/schemas/webhooks.js';
import { parseInput } from '../../http/validate.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, pageLink, table, type Viewer } from '../layout.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/webhooks';
const hookPath = (id: string) => `${PATH}/${encodeURIComponent(id)}`;
/** Deliveries listed per page of an endpoint's log. */
const DELIVERIES_PER_PAGE = 25;

function workerOf(dash: DashContext) {
  if (!dash.deps.webhooks) {
    throw new AppError('unavailable', 'Webhook delivery is not running in this process.');
  }
  return dash.deps.webhooks;
}

function eventsOf(text: string | undefined): string[] | undefined {
  const list = (text ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length === 0 ? undefined : list;
}

function secretNotice(secret: string): Html {
  return markup`<div class="notice" role="status">
    <p>
      <strong>The signing secret, shown this once.</strong> Store it with the receiver: it verifies
      the <code>Webhook-Signature</code> header.
    </p>
    <code class="secret" id="new-secret">${secret}</code>
    <button type="button" class="secondary" data-copy="new-secret">Copy secret</button>
  </div>`;
}

function createForm(viewer: Viewer, values: Record<string, string>, error?: AppError): Html {
  const errorOf = (name: string) =>
    error && (error.field === name || error.field?.startsWith(`${name}[`))
      ? error.message
      : undefined;
  return markup`<form class="box" method="post" action="${PATH}" novalidate>
    ${csrfField(viewer)}
    <h2>Register an endpoint</h2>
    ${error && !errorOf('url') && !errorOf('events') ? markup`<div class="error" role="alert">${error.message}</div>` : ''}
    ${field({ name: 'url', label: 'Endpoint URL', value: values.url, error: errorOf('url'), required: true, hint: 'https://… (your receiver)' })}
    ${field({ name: 'events', label: 'Events', value: values.events, error: errorOf('events'), hint: `Empty: every event. Or some of: ${EVENT_TYPES.join(', ')}` })}
    <button type="submit">Register endpoint</button>
  </form>`;
}

async function renderList(
  ctx: Koa.Context,
  dash: DashContext,
  extra: { values?: Record<string, string>; error?: AppError } = {},
  status = 200,
) {
  const given = queryOf(ctx);
  const query = parseInput(WebhookListQueryString, { limit: '50', ...given }, 'query');
  const list = await listWebhooks(dash.deps.db, query);
  dash.render(
    'Webhooks',
    PATH,
    markup`${canWrite(dash.viewer) ? createForm(dash.viewer, extra.values ?? {}, extra.error) : ''}
      <h2>Endpoints</h2>
      ${
        list.webhooks.length === 0
          ? markup`<div class="box">
              <p>
                No endpoints
                yet.${canWrite(dash.viewer) ? ' Register one above to be told when products, feeds and integrations change.' : ''}
              </p>
            </div>`
          : table(
              ['Endpoint', 'Events', 'State'],
              list.webhooks.map((w) => [
                markup`<a href="${hookPath(w.id)}">${w.url}</a><br /><code class="muted"
                    >${w.id}</code
                  >`,
                w.events.join(', '),
                w.status === 'disabled' ? markup`disabled (${w.disabled_reason ?? ''})` : w.status,
              ]),
            )
      }
      ${listPager(list.pagination, { shown: list.webhooks.length, pageSize: query.limit, link: (at) => pageLink(PATH, given, at), fmt: dash.fmt })}`,
    status,
  );
}

async function renderHook(ctx: Koa.Context, dash: DashContext, notice?: Html) {
  const id = String(ctx.params.id);
  const w = presentWebhook(await findWebhook(dash.deps.db, id));
  // queryOf leaves out the empty fields the filter form sends for "(any)".
  const given = queryOf(ctx);
  const q = parseInput(
    DeliveryListQueryString,
    { limit: String(DELIVERIES_PER_PAGE), ...given },
    'query',
  );
  const deliveries = await listDeliveries(dash.deps.db, id, q);
  const link = (at: number) => pageLink(hookPath(w.id), given, at);
  const filtered = q.status !== undefined || q.event !== undefined;
  const write = canWrite(dash.viewer);
  dash.render(
    'Webhook endpoint',
    PATH,
    markup`${notice ?? ''}
      <div class="box">
        <dl>
          <dt>URL</dt>
          <dd><code>${w.url}</code></dd>
          <dt>Events</dt>
          <dd>${w.events.join(', ')}</dd>
          <dt>State</dt>
          <dd>
            ${w.status}${w.disabled_reason ? markup` (${w.disabled_reason} ${dash.fmt.when(w.disabled_at, '')})` : ''}${w.failing_since ? markup`; failing since ${dash.fmt.when(w.failing_since)}` : ''}
          </dd>
          ${
            w.previous_secret_expires_at
              ? markup`<dt>Previous secret</dt>
                  <dd>still signs until ${dash.fmt.date(w.previous_secret_expires_at)}</dd>`
              : ''
          }
        </dl>
        ${
          write
            ? markup`<form class="inline" method="post" action="${hookPath(w.id)}/test">
                  ${csrfField(dash.viewer)}<button type="submit">Send a test event</button>
                </form>
                <form class="inline" method="post" action="${hookPath(w.id)}/rotate">
                  ${csrfField(dash.viewer)}<button type="submit" class="secondary">
                    Rotate the secret
                  </button>
                </form>
                <form class="inline" method="post" action="${hookPath(w.id)}/status">
                  ${csrfField(dash.viewer)}<input
                    type="hidden"
                    name="status"
                    value="${w.status === 'active' ? 'disabled' : 'active'}"
                  /><button type="submit" class="secondary">
                    ${w.status === 'active' ? 'Disable' : 'Enable'}
                  </button>
                </form>`
            : ''
        }
      </div>
      <h2>Deliveries</h2>
      <form class="box filters" method="get" action="${hookPath(w.id)}">
        <div>
          ${field({ name: 'status', label: 'State', value: q.status ?? '', options: ['', ...DELIVERY_STATUSES] })}
        </div>
        <div>
          ${field({ name: 'event', label: 'Event', value: q.event ?? '', options: ['', ...EVENT_TYPES, TEST_EVENT_TYPE] })}
        </div>
        <div><button type="submit">Show</button></div>
      </form>
      ${
        deliveries.deliveries.length === 0
          ? markup`<p>
              ${
                filtered
                  ? 'No delivery matches these filters.'
                  : `No deliveries yet.${write ? ' Send a test event to check the receiver.' : ''}`
              }
            </p>`
          : table(
              ['Event', 'State', 'Attempts', 'Last answer', 'When', ''],
              deliveries.deliveries.map((d) => [
                markup`${d.event}${d.test ? ' (test)' : ''}<br /><code class="muted">${d.id}</code>`,
                d.status,
                dash.fmt.number(d.attempts),
                d.status_code !== null ? markup`HTTP ${d.status_code}` : (d.error ?? '—'),
                markup`${dash.fmt.when(d.last_attempt_at ?? d.created_at)}${d.next_attempt_at ? markup`<br /><span class="muted">next ${dash.fmt.when(d.next_attempt_at)}</span>` : ''}`,
                write && d.status !== 'succeeded'
                  ? markup`<form
                      class="inline"
                      method="post"
                      action="${hookPath(w.id)}/deliveries/${encodeURIComponent(d.id)}/retry"
                    >
                      ${csrfField(dash.viewer)}<button type="submit" class="secondary">
                        Retry now
                      </button>
                    </form>`
                  : '',
              ]),
            )
      }
      ${listPager(deliveries.pagination, { shown: deliveries.deliveries.length, pageSize: DELIVERIES_PER_PAGE, link, fmt: dash.fmt })}
      <p><a href="${PATH}">All endpoints</a></p>`,
  );
}

const policyOf = (dash: DashContext) => ({ allowPrivate: dash.deps.config.ALLOW_PRIVATE_TARGETS });

export const webhookPages: DashRoute[] = [
  { method: 'get', path: PATH, permission: 'read', handler: (ctx, dash) => renderList(ctx, dash) },
  {
    method: 'post',
    path: PATH,
    permission: 'write',
    handler: async (ctx, dash) => {
      const { form, deps } = dash;
      const input: Record<string, unknown> = { url: form.url ?? '' };
      const events = eventsOf(form.events);
      if (events) input.events = events;
      try {
        const body = parseInput(WebhookCreate, input, 'body');
        const { webhook, secret } = await createWebhook(deps.db, body, policyOf(dash), deps.now());
        ctx.params.id = webhook.id;
        await renderHook(ctx, dash, secret ? secretNotice(secret) : undefined);
        ctx.status = 201;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await renderList(ctx, dash, { values: form, error: err }, 422);
      }
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id`,
    permission: 'read',
    handler: (ctx, dash) => renderHook(ctx, dash),
  },
  {
    method: 'post',
    path: `${PATH}/:id/test`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const d = await workerOf(dash).sendTest(String(ctx.params.id));
      await renderHook(
        ctx,
        dash,
        markup`<div class="notice" role="status">
          Test event sent:
          ${d.status}${d.status_code !== null ? markup`, the receiver answered HTTP ${d.status_code}` : d.error ? markup`: ${d.error}` : ''}.
        </div>`,
      );
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/rotate`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const body = parseInput(WebhookUpdate, { rotate_secret: true }, 'body');
      const { secret } = await updateWebhook(
        dash.deps.db,
        String(ctx.params.id),
        body,
        policyOf(dash),
        dash.deps.now(),
      );
      await renderHook(ctx, dash, secret ? secretNotice(secret) : undefined);
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/status`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const body = parseInput(WebhookUpdate, { status: dash.form.status }, 'body');
      await updateWebhook(
        dash.deps.db,
        String(ctx.params.id),
        body,
        policyOf(dash),
        dash.deps.now(),
      );
      ctx.status = 303;
      ctx.redirect(hookPath(String(ctx.params.id)));
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/deliveries/:delivery_id/retry`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const d = await workerOf(dash).retryDelivery(
        String(ctx.params.id),
        String(ctx.params.delivery_id),
      );
      await renderHook(
        ctx,
        dash,
        markup`<div class="notice" role="status">Delivery ${d.id} retried: ${d.status}.</div>`,
      );
    },
  },
];
