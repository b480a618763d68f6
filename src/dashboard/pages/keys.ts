import {
  ApiKeyCreate,
  KEY_LEVELS,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../domain/access/api-keys.js';
import { PLAN_NAMES } from '../../config.js';
import { listAuditLog } from '../../domain/audit/log.js';
import { AuditLogQueryString } from '../../http/schemas/audit.js';
import { parseInput } from '../../http/validate.js';
import { AppError } from '../../errors.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, pageLink, table, type Viewer } from '../layout.js';
import { queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/settings/api-keys';

function createForm(viewer: Viewer, values: Record<string, string>, error?: AppError): Html {
  const errorOf = (name: string) => (error?.field === name ? error.reason : undefined);
  return markup`<form class="box" method="post" action="${PATH}">
    ${csrfField(viewer)}
    <h2>Generate a key</h2>
    ${field({ name: 'name', label: 'Name', value: values.name, error: errorOf('name'), hint: 'What the key is for, e.g. "ChatGPT connector"' })}
    ${field({ name: 'level', label: 'Level', value: values.level ?? 'read_only', options: KEY_LEVELS, error: errorOf('level') })}
    ${field({ name: 'plan', label: 'Plan', value: values.plan ?? '', options: ['', ...PLAN_NAMES], error: errorOf('plan'), hint: 'Empty: the default plan' })}
    <button type="submit">Generate key</button>
  </form>`;
}

async function renderKeys(
  dash: DashContext,
  query: Record<string, string>,
  extra: {
    created?: { id: string; secret: string };
    notice?: string;
    values?: Record<string, string>;
    error?: AppError;
  },
  status = 200,
): Promise<void> {
  const { deps, viewer } = dash;
  const keys = await listApiKeys(deps.db);
  const rows = keys.map((k) => [
    markup`<code>${k.id}</code><br />${k.name ?? markup`<span class="muted">unnamed</span>`}`,
    k.level,
    markup`${k.prefix}…${k.last4}`,
    markup`${k.plan}<br /><span class="muted"
        >${k.limits.per_minute}/min, burst ${k.limits.burst_per_10_seconds}/10 s,
        ${k.limits.monthly === null ? 'no monthly cap' : `${k.limits.monthly}/month`}</span
      >`,
    markup`${dash.fmt.date(k.created_at)}<br /><span class="muted"
        >last used ${dash.fmt.when(k.last_used_at, 'never')}</span
      >`,
    k.revoked_at
      ? markup`revoked ${dash.fmt.when(k.revoked_at)}`
      : k.id === viewer.keyId
        ? markup`active (this session)`
        : markup`<form class="inline" method="post" action="${PATH}/${k.id}/revoke">
            ${csrfField(viewer)}<button
              class="danger"
              type="submit"
              aria-label="Revoke ${k.name ?? k.id}"
            >
              Revoke
            </button>
          </form>`,
  ]);
  // The audit log, with the API's filters.
  let audit: Html;
  try {
    const q = parseInput(AuditLogQueryString, { limit: '25', ...query }, 'query');
    await deps.audit?.flush();
    const log = await listAuditLog(deps.db, q);
    audit = markup`${
      log.entries.length === 0
        ? markup`<p>No requests match. Requests made with any key are listed here.</p>`
        : table(
            ['Time', 'Key', 'Request', 'Status', 'Client'],
            log.entries.map((e) => [
              dash.fmt.date(e.time),
              markup`<code>${e.key_id}</code>`,
              markup`${e.method} ${e.path}`,
              e.status,
              e.client_ip ?? '',
            ]),
          )
    }
      ${listPager(log.pagination, { shown: log.entries.length, pageSize: q.limit, link: (at) => pageLink(PATH, query, at, '#audit'), fmt: dash.fmt })}`;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    audit = markup`<div class="error" role="alert">${err.message}</div>`;
  }
  dash.render(
    'Settings › API keys',
    PATH,
    markup`${extra.notice ? markup`<div class="notice" role="status">${extra.notice}</div>` : ''}
      ${
        extra.created
          ? markup`<div class="notice" role="status">
              <p>
                <strong>Your new key, shown this once.</strong> Copy it now: it is stored only as a
                hash and cannot be shown again.
              </p>
              <code class="secret" id="new-key">${extra.created.secret}</code>
              <button type="button" class="secondary" data-copy="new-key">Copy key</button>
            </div>`
          : ''
      }
      ${createForm(viewer, extra.values ?? {}, extra.error)}
      <h2>Keys</h2>
      ${table(['Key', 'Level', 'Secret', 'Plan and limits', 'Created', 'State'], rows)}
      <h2 id="audit">Audit log</h2>
      <form class="box filters" method="get" action="${PATH}">
        <div>${field({ name: 'key_id', label: 'Key id', value: query.key_id })}</div>
        <div>
          ${field({ name: 'status', label: 'Status', value: query.status, hint: '429 or 4xx' })}
        </div>
        <div>
          ${field({ name: 'since', label: 'Since', value: query.since, hint: '2026-11-01' })}
        </div>
        <div>${field({ name: 'until', label: 'Until', value: query.until })}</div>
        <div><button type="submit">Filter</button></div>
      </form>
      ${audit}`,
    status,
  );
}

export const keyPages: DashRoute[] = [
  {
    method: 'get',
    path: PATH,
    permission: 'admin',
    handler: async (ctx, dash) => renderKeys(dash, queryOf(ctx), {}),
  },
  {
    method: 'post',
    path: PATH,
    permission: 'admin',
    handler: async (_ctx, dash) => {
      const { form, deps } = dash;
      const input: Record<string, unknown> = { level: form.level };
      if (form.name) input.name = form.name;
      if (form.plan) input.plan = form.plan;
      try {
        const body = parseInput(ApiKeyCreate, input, 'body');
        const { key, secret } = await createApiKey(deps.db, body, {
          environment: deps.config.ENVIRONMENT,
          defaultPlan: deps.config.DEFAULT_PLAN,
          now: deps.now(),
        });
        deps.keyCache.invalidate();
        await renderKeys(dash, {}, { created: { id: key.id, secret } }, 201);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await renderKeys(dash, {}, { values: form, error: err }, 422);
      }
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/revoke`,
    permission: 'admin',
    handler: async (ctx, dash) => {
      const key = await revokeApiKey(dash.deps.db, String(ctx.params.id), dash.deps.now());
      dash.deps.keyCache.invalidate();
      await renderKeys(
        dash,
        {},
        { notice: `Key ${key.id} is revoked: the next request with it is refused.` },
      );
    },
  },
];
