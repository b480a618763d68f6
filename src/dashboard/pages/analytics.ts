import {
  agentBreakdown,
  analyticsOverview,
  dailySeries,
  productAnalytics,
  resolvePeriod,
  type Period,
} from '../../domain/analytics/metrics.js';
import { searchAnalytics } from '../../domain/analytics/searches.js';
import { renderBarChart, renderLineChart } from '../../reports/charts.js';
import { createReport, findReadyReport, listReports } from '../../domain/reports/reports.js';
import { reportFilePath } from '../../domain/reports/files.js';
import { REPORT_FORMATS, REPORT_TYPES, ReportCreate } from '../../domain/reports/schemas.js';
import { attachmentDisposition, servePublishedFile } from '../../http/file-response.js';
import { PeriodQueryString } from '../../http/schemas/analytics.js';
import { parseInput } from '../../http/validate.js';
import { AppError, notFound } from '../../errors.js';
import { join, markup, type Html } from '../../markup.js';
import { csrfField, field, table } from '../layout.js';
import type { Formatter } from '../format.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/analytics';
const KINDS = ['assistant', 'search', 'training', 'agent'] as const;

function growth(fmt: Formatter, rate: number | null | undefined): Html {
  if (rate === undefined || rate === null)
    return markup`<span class="muted">no earlier data</span>`;
  const sign = rate > 0 ? '▲' : rate < 0 ? '▼' : '■';
  return markup`<span>${sign} ${fmt.percent(Math.abs(rate))} vs the previous period</span>`;
}

/**
 * The analytics part of the page (the overview counts the whole catalogue: about 80 ms on a
 * million products; then the series, the tops, three charts and the agents' searches) is kept
 * 15 s per store and period, so a page reloaded or opened by a few people at once is not
 * computed again. The reports list below it is read each time.
 */
const SECTION_TTL_MS = 15_000;
const sections = new WeakMap<object, Map<string, { at: number; value: Promise<Html> }>>();

function cachedSection(
  deps: DashContext['deps'],
  period: Period,
  fmt: Formatter,
  compute: () => Promise<Html>,
): Promise<Html> {
  let byPeriod = sections.get(deps.db);
  if (!byPeriod) sections.set(deps.db, (byPeriod = new Map()));
  const key = `${period.start}|${period.end}|${fmt.locale}`;
  const now = deps.now().getTime();
  const hit = byPeriod.get(key);
  if (hit && now - hit.at < SECTION_TTL_MS) return hit.value;
  if (byPeriod.size > 100) byPeriod.clear();
  const value = compute();
  byPeriod.set(key, { at: now, value });
  value.catch(() => byPeriod.delete(key));
  return value;
}

/**
 * The charts' drawing size: 720 units wide, shown at least 720 px wide (scrolling inside their
 * own figure on a narrow screen), so their 11-unit text is never smaller than 11 px.
 */
const CHART_SIZE = { width: 720, height: 300 };

/** The currencies with a revenue chart: the store's, then each other one sold in. */
function revenueCodes(currency: string, byCurrency: Record<string, number> | undefined): string[] {
  const others = Object.keys(byCurrency ?? {}).filter((c) => c !== currency);
  return [currency, ...others.sort()];
}

type Extra = { notice?: string; error?: AppError; values?: Record<string, string> };

/** The analytics of a period: the counts, three charts, the top products and agents. */
async function analyticsSection(
  deps: DashContext['deps'],
  period: Period,
  fmt: Formatter,
): Promise<Html> {
  const currency = deps.config.DEFAULT_CURRENCY;
  const options = { currency, storeName: deps.config.STORE_NAME };
  const overview = await analyticsOverview(deps.db, period, options);
  const daily = await dailySeries(deps.db, period, { currency });
  const top = await productAnalytics(
    deps.db,
    period,
    { limit: 10, offset: 0, sort: 'interactions' },
    options,
  );
  const agents = await agentBreakdown(deps.db, period);
  const m = overview.metrics;
  const tr = overview.trends;
  const labels = daily.map((d) => d.date);
  const empty = (m.ai_interactions ?? 0) === 0 && daily.every((d) => d.conversions === 0);
  return markup`<p class="muted">
    ${fmt.day(overview.period.start_date)} to ${fmt.day(overview.period.end_date)} (UTC days)
  </p>
  <div class="metrics">
    <div class="metric">
      <div>Active products</div>
      <div class="value">${fmt.number(m.total_products)}</div>
    </div>
    <div class="metric">
      <div>AI interactions</div>
      <div class="value">${fmt.number(m.ai_interactions)}</div>
      <div>${fmt.number(tr.ai_interactions?.daily_average, 1)} a day</div>
      ${growth(fmt, tr.ai_interactions?.growth_rate)}
    </div>
    <div class="metric">
      <div>Discovered by agents</div>
      <div class="value">${fmt.percent(m.discovery_rate)}</div>
    </div>
    <div class="metric">
      <div>Conversion rate</div>
      <div class="value">${fmt.percent(m.conversion_rate)}</div>
      ${growth(fmt, tr.conversion_rate?.growth_rate)}
    </div>
    ${Object.entries(m.revenue_by_currency ?? { [currency]: m.revenue ?? 0 }).map(
      ([code, amount]) =>
        markup`<div class="metric" data-currency="${code}">
          <div>Revenue (${code})</div>
          <div class="value">${fmt.money(amount, code)}</div>
        </div>`,
    )}
  </div>
  ${
    empty
      ? markup`<div class="box">
          <p>
            No AI traffic in this period yet. Agents are counted when they read your discovery
            pages and feeds; import CDN logs with <code>agentshelf analytics import</code>, or
            send conversions to <code>POST /v1/analytics/events</code>.
          </p>
        </div>`
      : ''
  }
  <h2>Daily</h2>
  <figure class="chart" id="chart-interactions" tabindex="0">
    <figcaption>AI interactions by agent kind</figcaption>
    ${renderLineChart({ title: 'AI interactions per day by agent kind', labels, series: KINDS.map((k) => ({ name: k, values: daily.map((d) => d.interactions[k]) })), yLabel: 'Interactions', xLabel: 'Day (UTC)', integer: true, ...CHART_SIZE })}
  </figure>
  <figure class="chart" id="chart-conversions" tabindex="0">
    <figcaption>Conversions</figcaption>
    ${renderBarChart({ title: 'Conversions per day', labels, series: [{ name: 'conversions', values: daily.map((d) => d.conversions) }], yLabel: 'Conversions', xLabel: 'Day (UTC)', integer: true, ...CHART_SIZE })}
  </figure>
  ${revenueCodes(currency, m.revenue_by_currency).map(
    (
      code,
    ) => markup`<figure class="chart" id="${code === currency ? 'chart-revenue' : `chart-revenue-${code.toLowerCase()}`}" tabindex="0">
      <figcaption>Revenue (${code})</figcaption>
      ${renderBarChart({ title: `Revenue per day (${code})`, labels, series: [{ name: 'revenue', values: daily.map((d) => (code === currency ? d.revenue : (d.other_currencies.find((o) => o.currency === code)?.amount ?? 0))), color: '#009E73' }], yLabel: `Revenue (${code})`, xLabel: 'Day (UTC)', ...CHART_SIZE })}
    </figure>`,
  )}
  <h2>Top products</h2>
  ${
    top.products.length === 0
      ? markup`<p>No product was read by an agent in this period.</p>`
      : table(
          ['Product', 'AI interactions', 'Views', 'Conversions', 'Revenue'],
          top.products.map((p) => [
            markup`<a href="/dashboard/products/${encodeURIComponent(p.product_id)}"
              >${p.name ?? p.product_id}</a
            >`,
            fmt.number(p.interactions.total),
            fmt.number(p.views),
            fmt.number(p.conversions),
            join(
              Object.entries(p.revenue_by_currency).map(([code, amount]) =>
                fmt.money(amount, code),
              ),
              '<br />',
            ),
          ]),
        )
  }
  <h2>Top agents</h2>
  ${
    agents.agents.length === 0
      ? markup`<p>No AI agent seen in this period.</p>`
      : table(
          ['Agent', 'Operator', 'Kind', 'Interactions', 'Verified'],
          agents.agents
            .slice(0, 15)
            .map((a) => [
              a.agent ?? 'unknown',
              a.operator ?? '—',
              a.kind,
              fmt.number(a.interactions),
              fmt.number(a.verified),
            ]),
        )
  }`;
}

/** What agents searched the UCP catalog for, and what they could not find. */
async function searchesSection(
  deps: DashContext['deps'],
  period: Period,
  fmt: Formatter,
): Promise<Html> {
  const { top_queries, top_without_results } = await searchAnalytics(deps.db, period, 10);
  const rows = (list: typeof top_queries) =>
    list.map((q) => [q.query, fmt.number(q.searches), fmt.number(q.no_results)]);
  const headers = ['Query', 'Searches', 'Found nothing'];
  return markup`<h2 id="searches">What agents searched for</h2>
    ${
      top_queries.length === 0
        ? markup`<p>No agent searched the catalog (UCP) in this period.</p>`
        : table(headers, rows(top_queries))
    }
    <h2>Searched for, not found</h2>
    ${
      top_without_results.length === 0
        ? markup`<p>Every search in this period found something.</p>`
        : table(headers, rows(top_without_results))
    }`;
}

/** The reports form (for a key that may write) and the last ten reports. */
async function reportsSection(
  dash: DashContext,
  query: Record<string, string>,
  extra: Extra,
): Promise<Html> {
  const { deps } = dash;
  const reports = await listReports(deps.db, {}, { limit: 10, offset: 0 }, deps.config.BASE_URL);
  const values = extra.values ?? {};
  const errorOf = (name: string) => (extra.error?.field === name ? extra.error.message : undefined);
  return markup`<h2>Reports</h2>
      ${
        canWrite(dash.viewer)
          ? markup`<form class="box filters" method="post" action="${PATH}/reports">
              ${csrfField(dash.viewer)}
              ${extra.error && !['type', 'format', 'start_date', 'end_date'].some((n) => errorOf(n)) ? markup`<div class="error" role="alert">${extra.error.message}</div>` : ''}
              <div>
                ${field({ name: 'type', label: 'Report', value: values.type ?? 'analytics', options: REPORT_TYPES, error: errorOf('type') })}
              </div>
              <div>
                ${field({ name: 'format', label: 'Format', value: values.format ?? 'html', options: REPORT_FORMATS, error: errorOf('format') })}
              </div>
              <div>
                ${field({ name: 'start_date', id: 'report-start_date', label: 'From', type: 'date', value: values.start_date ?? query.start_date, error: errorOf('start_date') })}
              </div>
              <div>
                ${field({ name: 'end_date', id: 'report-end_date', label: 'To', type: 'date', value: values.end_date ?? query.end_date, error: errorOf('end_date') })}
              </div>
              <div><button type="submit">Generate report</button></div>
            </form>`
          : ''
      }
      ${
        reports.reports.length === 0
          ? markup`<p>No reports yet.${canWrite(dash.viewer) ? ' Generate one above.' : ''}</p>`
          : table(
              ['Report', 'Period', 'State', 'File'],
              reports.reports.map((r) => [
                markup`${r.type} (${r.format})<br /><span class="muted">${dash.fmt.when(r.created_at)}</span>`,
                markup`${dash.fmt.day(r.start_date)} to ${dash.fmt.day(r.end_date)}`,
                r.status === 'failed' ? markup`failed: ${r.failure_reason ?? ''}` : r.status,
                r.status === 'ready'
                  ? markup`<a href="${PATH}/reports/${encodeURIComponent(r.id)}/download"
                      >Download ${r.file_name}</a
                    >`
                  : markup`<span class="muted">reload to see when ready</span>`,
              ]),
            )
      }`;
}

async function renderAnalytics(
  dash: DashContext,
  query: Record<string, string>,
  extra: Extra = {},
  status = 200,
): Promise<void> {
  const { deps } = dash;
  let body: Html;
  try {
    const period = resolvePeriod(parseInput(PeriodQueryString, query, 'query'), deps.now());
    body = await cachedSection(
      deps,
      period,
      dash.fmt,
      async () =>
        markup`${await analyticsSection(deps, period, dash.fmt)}
          ${await searchesSection(deps, period, dash.fmt)}`,
    );
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    body = markup`<div class="error" role="alert">${err.message}</div>`;
  }
  dash.render(
    'Analytics',
    PATH,
    markup`${extra.notice ? markup`<div class="notice" role="status">${extra.notice}</div>` : ''}
      <form class="box filters" method="get" action="${PATH}">
        <div>
          ${field({ name: 'start_date', label: 'From', type: 'date', value: query.start_date })}
        </div>
        <div>${field({ name: 'end_date', label: 'To', type: 'date', value: query.end_date })}</div>
        <div><button type="submit">Show period</button></div>
      </form>
      ${body}
      ${await reportsSection(dash, query, extra)}`,
    status,
  );
}

export const analyticsPages: DashRoute[] = [
  {
    method: 'get',
    path: PATH,
    permission: 'read',
    handler: (ctx, dash) => renderAnalytics(dash, queryOf(ctx)),
  },
  {
    method: 'post',
    path: `${PATH}/reports`,
    permission: 'write',
    handler: async (_ctx, dash) => {
      const { form, deps } = dash;
      const input: Record<string, unknown> = { type: form.type, format: form.format };
      if (form.start_date) input.start_date = form.start_date;
      if (form.end_date) input.end_date = form.end_date;
      try {
        const body = parseInput(ReportCreate, input, 'body');
        const report = await createReport(deps.db, body, deps.config.BASE_URL, deps.now());
        await renderAnalytics(
          dash,
          {},
          {
            notice: `Report ${report.id} requested: it is generated in the background; reload to download it.`,
          },
          201,
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await renderAnalytics(dash, {}, { error: err, values: form }, 422);
      }
    },
  },
  {
    method: 'get',
    path: `${PATH}/reports/:id/download`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const { deps } = dash;
      const row = await findReadyReport(deps.db, String(ctx.params.id));
      const reply = await servePublishedFile(ctx, {
        path: reportFilePath(deps.config.DATA_DIR, row.id, row.format),
        contentType: row.content_type,
        disposition: attachmentDisposition(
          row.file_name.replace(/\.[a-z]+$/, ''),
          row.format,
          row.id,
        ),
        gzip: false,
      });
      if (!reply) throw notFound('report file', row.id);
      ctx.status = reply.status ?? 200;
      for (const [k, v] of Object.entries(reply.headers ?? {}))
        if (k !== 'Cache-Control') ctx.set(k, v);
      // Downloaded, never rendered here: an HTML report runs nothing from this origin.
      ctx.set(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
      );
      ctx.body = reply.body ?? null;
    },
  },
];
