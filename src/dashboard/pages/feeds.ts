import type Koa from 'koa';
import {
  createFeed,
  feedNotReady,
  feedOptionsOf,
  findPublishedFeed,
  updateFeed,
  getFeed,
  listFeeds,
} from '../../domain/feeds/feeds.js';
import { listDeliveries, releaseDelivery } from '../../domain/feeds/deliveries.js';
import { previewFeed, storeChannelSettingsOf } from '../../domain/feeds/preview.js';
import {
  FEED_FORMATS,
  FEED_PROFILE_NAMES,
  FeedCreate,
  FeedUpdate,
  type Feed,
} from '../../domain/feeds/schemas.js';
import { PRODUCT_STATUSES } from '../../domain/products/schemas.js';
import { FEED_CONTENT_TYPES, feedDiagnosticsPath, feedFilePath } from '../../domain/feeds/files.js';
import { productsWithProblem } from '../../domain/feeds/problems.js';
import { attachmentDisposition, servePublishedFile } from '../../http/file-response.js';
import { FeedDeliveryListQuery, FeedListQueryString } from '../../http/schemas/feeds.js';
import { parseInput } from '../../http/validate.js';
import { AppError } from '../../errors.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, pageLink, pager, table, type Viewer } from '../layout.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';
import {
  channelDetails,
  channelForm,
  channelInput,
  COMPRESSION_LABELS,
  DELIVERY_STATE_OPTIONS,
  deliveryForms,
  deliveryInput,
  deliveryTable,
  type FeedForm,
  PROFILE_LABELS,
  previewReasons,
} from './feed-channel.js';

const PATH = '/dashboard/feeds';
const feedPath = (id: string) => `${PATH}/${encodeURIComponent(id)}`;
const problemsPath = (id: string, code: string, offset = 0) =>
  `${feedPath(id)}/problems?code=${encodeURIComponent(code)}${offset > 0 ? `&offset=${offset}` : ''}`;
/** Products listed per page of a problem. */
const PROBLEM_PAGE = 50;
/** Deliveries listed per page of a feed's history. */
const DELIVERIES_PER_PAGE = 20;
const productPath = (id: string) => `/dashboard/products/${encodeURIComponent(id)}`;

/** A form of the feed page posted back with a refusal, shown again with it. */
interface FeedPageForm {
  form: 'channel' | 'delivery';
  values: Record<string, string>;
  error: AppError;
}

function createForm(viewer: Viewer, values: Record<string, string>, error?: AppError): Html {
  const errorOf = (name: string) =>
    error && (error.field === name || error.field?.startsWith(`${name}.`))
      ? error.message
      : undefined;
  return markup`<form class="box" method="post" action="${PATH}" novalidate>
    ${csrfField(viewer)}
    <h2>Create a feed</h2>
    ${error && !['name', 'profile', 'format', 'compression', 'filters'].some((n) => errorOf(n)) ? markup`<div class="error" role="alert">${error.message}</div>` : ''}
    ${field({ name: 'name', label: 'Name', value: values.name, error: errorOf('name'), required: true })}
    ${field({ name: 'profile', label: 'Channel', value: values.profile ?? 'agentshelf', options: FEED_PROFILE_NAMES, labels: PROFILE_LABELS, error: errorOf('profile') })}
    ${field({ name: 'format', label: 'Format', value: values.format ?? 'json', options: FEED_FORMATS, error: errorOf('format'), hint: 'OpenAI takes jsonl, csv, tsv or xml; Google tsv or xml; ACP jsonl or csv; Stripe csv.' })}
    ${field({ name: 'compression', label: 'Compression', value: values.compression ?? '', options: ['', 'gzip'], labels: COMPRESSION_LABELS, error: errorOf('compression') })}
    ${field({ name: 'category', label: 'Only this category (and below)', value: values.category, error: errorOf('filters') })}
    ${field({ name: 'status', label: 'Only products with status', value: values.status ?? 'active', options: PRODUCT_STATUSES, hint: 'A feed lists active products unless told otherwise.' })}
    <button type="submit">Create feed</button>
  </form>`;
}

async function renderList(
  ctx: Koa.Context,
  dash: Parameters<DashRoute['handler']>[1],
  form?: { values: Record<string, string>; error: AppError },
) {
  const query = queryOf(ctx);
  const { limit, offset, ...filter } = parseInput(
    FeedListQueryString,
    { limit: '50', ...query },
    'query',
  );
  const list = await listFeeds(dash.deps.db, filter, { limit, offset }, dash.deps.config.BASE_URL);
  dash.render(
    'Feeds',
    PATH,
    markup`${canWrite(dash.viewer) ? createForm(dash.viewer, form?.values ?? {}, form?.error) : ''}
      <h2>Feeds</h2>
      ${
        list.feeds.length === 0
          ? markup`<div class="box">
              <p>
                No feeds
                yet.${canWrite(dash.viewer) ? ' Create one above: the pipeline generates it within a minute.' : ''}
              </p>
            </div>`
          : table(
              ['Name', 'Channel', 'Format', 'State', 'Products', 'Last updated'],
              list.feeds.map((f) => [
                markup`<a href="${feedPath(f.id)}">${f.name}</a><br /><code class="muted"
                    >${f.id}</code
                  >`,
                f.profile,
                f.format,
                f.status,
                dash.fmt.number(f.product_count),
                dash.fmt.when(f.last_updated, 'not generated yet'),
              ]),
            )
      }
      ${listPager(list.pagination, { shown: list.feeds.length, pageSize: limit, link: (at) => pageLink(PATH, query, at), fmt: dash.fmt })}`,
    form ? 422 : 200,
  );
}

/** The last generation's diagnostics: each problem with what to do and its products. */
function diagnosticsSection(dash: DashContext, f: Feed): Html {
  const d = f.diagnostics;
  return markup`<h2>Diagnostics</h2>
    ${
      d
        ? markup`<p>
              ${dash.fmt.number(d.products)} products checked ${dash.fmt.when(d.generated_at)}:
              ${dash.fmt.number(d.products_with_errors)} with errors,
              ${dash.fmt.number(d.products_with_warnings)} with warnings${d.excluded > 0 ? markup`, ${dash.fmt.number(d.excluded)} left out` : ''}.
            </p>
            ${
              d.issues.length === 0
                ? markup`<p>No issues.</p>`
                : table(
                    ['Field', 'Problem', 'Severity', 'Products', 'What to do'],
                    d.issues.map((i) => [
                      i.field,
                      i.problem,
                      i.severity,
                      markup`<a href="${problemsPath(f.id, i.code)}"
                        >${dash.fmt.number(i.count)}</a
                      >`,
                      markup`${i.message}: <a href="${problemsPath(f.id, i.code)}"
                          >see which products and fix them</a
                        >`,
                    ]),
                  )
            }
            <p><a href="${feedPath(f.id)}/diagnostics">Download every product's issues (NDJSON)</a></p>`
        : markup`<p>No diagnostics until the feed is generated.</p>`
    }`;
}

/** The delivery history, paged and filtered by state, with a release button on held ones. */
async function deliveriesSection(ctx: Koa.Context, dash: DashContext, f: Feed): Promise<Html | ''> {
  const write = canWrite(dash.viewer);
  // Only the list's own parameters (the page's address may carry others).
  const given = queryOf(ctx, ['status', 'offset']);
  const q = parseInput(
    FeedDeliveryListQuery,
    { limit: String(DELIVERIES_PER_PAGE), ...given },
    'query',
  );
  const deliveries = await listDeliveries(dash.deps.db, f.id, q);
  const { total } = deliveries.pagination;
  const historyLink = (at: number) => pageLink(feedPath(f.id), given, at, '#deliveries');
  const showHistory = f.delivery.type !== 'hosted' || total > 0 || q.status !== undefined;
  return showHistory
    ? markup`<h2 id="deliveries">Deliveries</h2>
            <form class="box filters" method="get" action="${feedPath(f.id)}#deliveries">
              <div>
                ${field({ name: 'status', id: 'f-delivery-status', label: 'State', value: q.status ?? '', options: DELIVERY_STATE_OPTIONS })}
              </div>
              <div><button type="submit">Show</button></div>
            </form>
            ${
              deliveries.deliveries.length === 0
                ? markup`<p>
                    ${q.status ? 'No delivery in this state.' : 'No deliveries yet: the next generation is sent.'}
                  </p>`
                : deliveryTable(
                    write ? dash.viewer : undefined,
                    (id) => `${feedPath(f.id)}/deliveries/${encodeURIComponent(id)}/release`,
                    deliveries.deliveries,
                    dash.fmt,
                  )
            }
            ${listPager(deliveries.pagination, { shown: deliveries.deliveries.length, pageSize: DELIVERIES_PER_PAGE, link: historyLink, fmt: dash.fmt })}`
    : '';
}

/** A feed's page: its definition, channel, diagnostics, deliveries and (writers) its forms. */
async function renderFeed(ctx: Koa.Context, dash: DashContext, posted?: FeedPageForm) {
  const { deps } = dash;
  const f = await getFeed(deps.db, String(ctx.params.id), deps.config.BASE_URL);
  const write = canWrite(dash.viewer);
  const formOf = (form: FeedPageForm['form']): FeedForm => ({
    viewer: dash.viewer,
    action: `${feedPath(f.id)}/${form}`,
    feed: f,
    ...(posted?.form === form ? { values: posted.values, error: posted.error } : {}),
  });
  dash.render(
    f.name,
    PATH,
    markup`<div class="box">
        <dl>
          <dt>Id</dt>
          <dd><code>${f.id}</code></dd>
          ${channelDetails(f)}
          <dt>State</dt>
          <dd>
            ${f.status}${f.status === 'processing' && f.estimated_completion ? markup` (expected ${dash.fmt.when(f.estimated_completion)})` : ''}
          </dd>
          <dt>Products</dt>
          <dd>${dash.fmt.number(f.product_count)}</dd>
          <dt>Generated</dt>
          <dd>
            ${dash.fmt.when(f.generated_at, 'not yet: the pipeline generates it shortly; reload this page')}
          </dd>
          <dt>API address</dt>
          <dd><code>${f.url}</code></dd>
          ${
            f.last_error
              ? markup`<dt>Last error</dt>
                  <dd class="field-error">
                    ${f.last_error.message} (${dash.fmt.when(f.last_error.occurred_at)})
                  </dd>`
              : ''
          }
        </dl>
        ${f.generated_at ? markup`<a class="button" href="${feedPath(f.id)}/export">Download the export</a>` : ''}
        <a class="button secondary" href="${feedPath(f.id)}/preview">Preview the next generation</a>
        ${
          write && f.status !== 'processing'
            ? markup`<form class="inline" method="post" action="${feedPath(f.id)}/status">${csrfField(dash.viewer)}<input type="hidden" name="status" value="${f.status === 'active' ? 'inactive' : 'active'}"><button type="submit" class="secondary">${f.status === 'active' ? 'Deactivate (stop serving it)' : 'Activate'}</button></form>`
            : ''
        }
      </div>
      ${diagnosticsSection(dash, f)}
      ${await deliveriesSection(ctx, dash, f)}
      ${
        write
          ? markup`<h2>Change the channel</h2>
              ${channelForm(formOf('channel'))}
              <h3>Where the file goes</h3>
              ${deliveryForms(formOf('delivery'))}`
          : ''
      }
      <p><a href="${PATH}">All feeds</a></p>`,
    posted ? 422 : 200,
  );
}

/** A change of the feed from one of its page's forms; a refusal shows the page again. */
function changeFeed(form: FeedPageForm['form'], inputOf: (f: Record<string, string>) => unknown) {
  return async (ctx: Koa.Context, dash: DashContext) => {
    const { deps } = dash;
    const id = String(ctx.params.id);
    try {
      const body = parseInput(FeedUpdate, inputOf(dash.form), 'body');
      await updateFeed(deps.db, id, body, feedOptionsOf(deps.config), deps.now());
    } catch (err) {
      if (!(err instanceof AppError) || err.kind === 'not_found') throw err;
      const values = { ...dash.form };
      // Secrets typed into a form are never sent back with it.
      for (const secret of ['password', 'private_key', 'token']) delete values[secret];
      await renderFeed(ctx, dash, { form, values, error: err });
      return;
    }
    ctx.status = 303;
    ctx.redirect(feedPath(id));
  };
}

export const feedPages: DashRoute[] = [
  { method: 'get', path: PATH, permission: 'read', handler: (ctx, dash) => renderList(ctx, dash) },
  {
    method: 'post',
    path: PATH,
    permission: 'write',
    handler: async (ctx, dash) => {
      const { form, deps } = dash;
      const input: Record<string, unknown> = { name: form.name ?? '', format: form.format };
      if (form.profile) input.profile = form.profile;
      if (form.compression) input.compression = form.compression;
      const filters: Record<string, string> = {};
      if (form.category) filters.category = form.category;
      if (form.status) filters.status = form.status;
      if (Object.keys(filters).length > 0) input.filters = filters;
      try {
        const body = parseInput(FeedCreate, input, 'body');
        const feed = await createFeed(deps.db, body, feedOptionsOf(deps.config), deps.now());
        ctx.status = 303;
        ctx.redirect(feedPath(feed.id));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await renderList(ctx, dash, { values: form, error: err });
      }
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id`,
    permission: 'read',
    handler: (ctx, dash) => renderFeed(ctx, dash),
  },
  {
    method: 'post',
    path: `${PATH}/:id/channel`,
    permission: 'write',
    handler: changeFeed('channel', channelInput),
  },
  {
    method: 'post',
    path: `${PATH}/:id/delivery`,
    permission: 'write',
    handler: changeFeed('delivery', deliveryInput),
  },
  {
    method: 'post',
    path: `${PATH}/:id/deliveries/:did/release`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const id = String(ctx.params.id);
      await releaseDelivery(dash.deps.db, id, String(ctx.params.did));
      ctx.status = 303;
      ctx.redirect(`${feedPath(id)}#deliveries`);
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id/preview`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const id = String(ctx.params.id);
      const f = await getFeed(deps.db, id, deps.config.BASE_URL);
      const p = await previewFeed(
        deps.db,
        deps.openReader,
        id,
        storeChannelSettingsOf(deps.config),
      );
      dash.render(
        `${f.name}: the next generation`,
        PATH,
        markup`<div class="box">
            <p>
              ${PROFILE_LABELS[p.profile]}, ${p.format}: of ${dash.fmt.number(p.products)} products
              selected, ${dash.fmt.number(p.included)} would be listed
              (${dash.fmt.number(p.records)} records) and ${dash.fmt.number(p.excluded)} left out.
              Nothing is written or sent to show this.
            </p>
          </div>
          <h2>Left out</h2>
          ${
            p.excluded_by_reason.length === 0
              ? markup`<p>None: every selected product meets the channel's rules.</p>`
              : previewReasons(p.excluded_by_reason, dash.fmt, productPath)
          }
          <h2>Listed, with warnings</h2>
          ${
            p.warnings.length === 0
              ? markup`<p>No warnings.</p>`
              : previewReasons(p.warnings, dash.fmt, productPath)
          }
          <p><a href="${feedPath(f.id)}">Back to ${f.name}</a></p>`,
      );
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/status`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const id = String(ctx.params.id);
      const body = parseInput(FeedUpdate, { status: dash.form.status }, 'body');
      await updateFeed(deps.db, id, body, feedOptionsOf(deps.config), deps.now());
      ctx.status = 303;
      ctx.redirect(feedPath(id));
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id/problems`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const f = await getFeed(deps.db, String(ctx.params.id), deps.config.BASE_URL);
      const query = queryOf(ctx);
      const issue = f.diagnostics?.issues.find((i) => i.code === query.code);
      if (!issue) {
        throw new AppError(
          'not_found',
          `No problem '${query.code ?? ''}' in the last generation of feed '${f.id}'.`,
          { field: 'code' },
        );
      }
      const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
      const page = await productsWithProblem(deps.db, deps.config.DATA_DIR, f.id, issue.code, {
        offset,
        limit: PROBLEM_PAGE,
      });
      if (!page) throw feedNotReady(await findPublishedFeed(deps.db, f.id, deps.now()), deps.now());
      dash.render(
        `${f.name}: ${issue.field} ${issue.problem}`,
        PATH,
        markup`<div class="box">
            <p>
              <strong>${issue.severity === 'error' ? 'Error' : 'Warning'}:</strong>
              ${issue.message}. ${dash.fmt.number(issue.count)} products, as the feed was generated
              ${dash.fmt.when(f.diagnostics?.generated_at)}.
            </p>
            <p>
              ${
                issue.severity === 'error'
                  ? 'Products with an error are left out of feeds for channels that refuse them. '
                  : ''
              }Open each product, fix its <code>${issue.field}</code>, and save: the pipeline
              generates the feed again a few seconds later, and this count falls.
            </p>
          </div>
          ${
            page.products.length === 0
              ? markup`<p>No product on this page.</p>`
              : table(
                  ['Product', 'Name', 'Status', 'In the feed'],
                  page.products.map((p) => [
                    markup`<a href="${productPath(p.id)}"><code>${p.id}</code></a>`,
                    p.name ?? markup`<span class="muted">deleted since</span>`,
                    p.status ?? '—',
                    p.excluded ? 'left out' : 'included',
                  ]),
                )
          }
          ${pager({
            offset,
            shown: page.products.length,
            total: issue.count,
            pageSize: PROBLEM_PAGE,
            hasMore: page.more,
            link: (at) => problemsPath(f.id, issue.code, at),
            count: (n) => dash.fmt.number(n),
          })}
          <p><a href="${feedPath(f.id)}">Back to ${f.name}</a></p>`,
      );
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id/diagnostics`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const feed = await findPublishedFeed(deps.db, String(ctx.params.id), deps.now());
      const reply = await servePublishedFile(ctx, {
        path: feedDiagnosticsPath(deps.config.DATA_DIR, feed.id),
        contentType: 'application/x-ndjson; charset=utf-8',
        disposition: attachmentDisposition(`${feed.name} diagnostics`, 'ndjson', feed.id),
      });
      if (!reply) throw feedNotReady(feed, deps.now());
      ctx.status = reply.status ?? 200;
      for (const [k, v] of Object.entries(reply.headers ?? {})) {
        if (k !== 'Cache-Control') ctx.set(k, v);
      }
      ctx.body = reply.body ?? null;
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id/export`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const feed = await findPublishedFeed(deps.db, String(ctx.params.id), deps.now());
      const reply = await servePublishedFile(ctx, {
        path: feedFilePath(deps.config.DATA_DIR, feed.id, feed.published_format),
        contentType: FEED_CONTENT_TYPES[feed.published_format],
        disposition: attachmentDisposition(feed.name, feed.published_format, feed.id),
      });
      if (!reply) throw feedNotReady(feed, deps.now());
      ctx.status = reply.status ?? 200;
      for (const [k, v] of Object.entries(reply.headers ?? {})) {
        if (k !== 'Cache-Control') ctx.set(k, v);
      }
      ctx.body = reply.body ?? null;
    },
  },
];
