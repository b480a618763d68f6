import { formatMinorUnits, toMinorUnits } from '../domain/money.js';
import {
  AGENT_KINDS,
  type AnalyticsReportContent,
  type ReportMetric,
} from '../domain/reports/content.js';
import type { ReportHeader } from '../domain/reports/header.js';
import { join, markup, type Html } from '../markup.js';
import { renderBarChart, renderLineChart } from './charts.js';
import { csvRows } from './csv.js';
import {
  htmlDocumentEnd,
  htmlDocumentStart,
  htmlTable,
  isolatedText,
  type HtmlColumn,
} from './html.js';

/** The agent kinds the series carry: the known ones in order, then any other. */
export function kindsOf(content: AnalyticsReportContent): string[] {
  const seen = new Set<string>(AGENT_KINDS);
  const extra: string[] = [];
  for (const day of content.daily) {
    for (const kind of Object.keys(day.interactions)) {
      if (!seen.has(kind)) {
        seen.add(kind);
        extra.push(kind);
      }
    }
  }
  return [...AGENT_KINDS, ...extra.sort()];
}

function money(minor: number, currency: string): string {
  return formatMinorUnits(minor, currency);
}

function metricValue(metric: ReportMetric, currency: string): string | number | null {
  if (metric.value === null) return null;
  return metric.unit === 'money' ? money(metric.value, currency) : metric.value;
}

/** Revenue per currency in words: "359.98 USD, 119.00 EUR". */
function byCurrencyText(byCurrency: Record<string, number>): string {
  return Object.entries(byCurrency)
    .map(([code, amount]) => `${money(toMinorUnits(amount, code), code)} ${code}`)
    .join(', ');
}

/** The analytics report as JSON: the same numbers the API gives, money as decimals. */
export function analyticsJson(header: ReportHeader, content: AnalyticsReportContent): string {
  const c = content.currency;
  const document = {
    report: header,
    currency: c,
    metrics: Object.fromEntries(
      content.metrics.map((m) => [
        m.name,
        {
          value: metricValue(m, c) === null ? null : Number(metricValue(m, c)),
          ...(m.daily_average !== undefined ? { daily_average: m.daily_average } : {}),
          ...(m.growth_rate !== undefined ? { growth_rate: m.growth_rate } : {}),
        },
      ]),
    ),
    daily: content.daily.map((d) => ({
      date: d.date,
      interactions: d.interactions,
      conversions: d.conversions,
      revenue: Number(money(d.revenue_minor, c)),
    })),
    other_currencies: content.otherCurrencies,
    revenue_by_currency: content.revenueByCurrency,
    top_products: content.topProducts.map((p) => ({
      id: p.id,
      name: p.name,
      interactions: p.interactions,
      views: p.views,
      clicks: p.clicks,
      conversions: p.conversions,
      revenue: Number(money(p.revenue_minor, c)),
      revenue_by_currency: p.revenue_by_currency,
    })),
    top_agents: content.topAgents,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * The analytics report as CSV: four sections (overview, daily series, top products, top
 * agents), each a header row then its rows, separated by an empty line.
 */
export function analyticsCsv(content: AnalyticsReportContent): string {
  const c = content.currency;
  const kinds = kindsOf(content);
  const sections = [
    csvRows([
      ['metric', 'value', 'daily_average', 'growth_rate'],
      ...content.metrics.map((m) => [
        m.name,
        metricValue(m, c),
        m.daily_average ?? null,
        m.growth_rate ?? null,
      ]),
      // Conversions in other currencies: their own rows, never summed into revenue.
      ...content.otherCurrencies.map((o) => [
        `revenue_${o.currency}`,
        money(toMinorUnits(o.amount, o.currency), o.currency),
        null,
        null,
      ]),
    ]),
    csvRows([
      ['date', ...kinds.map((k) => `${k}_interactions`), 'conversions', `revenue_${c}`],
      ...content.daily.map((d) => [
        d.date,
        ...kinds.map((k) => d.interactions[k] ?? 0),
        d.conversions,
        money(d.revenue_minor, c),
      ]),
    ]),
    csvRows([
      ['product_id', 'name', 'interactions', 'views', 'clicks', 'conversions', `revenue_${c}`],
      ...content.topProducts.map((p) => [
        p.id,
        p.name,
        p.interactions,
        p.views,
        p.clicks,
        p.conversions,
        money(p.revenue_minor, c),
      ]),
    ]),
    csvRows([
      ['agent', 'operator', 'kind', 'interactions'],
      ...content.topAgents.map((a) => [a.agent, a.operator, a.kind, a.interactions]),
    ]),
  ];
  return sections.join('\n');
}

function percent(ratio: number): string {
  return `${(ratio * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
}

function formatMetric(m: ReportMetric, currency: string): string {
  if (m.value === null) return '–';
  if (m.unit === 'ratio') return percent(m.value);
  if (m.unit === 'money') return `${money(m.value, currency)} ${currency}`;
  return m.value.toLocaleString('en-US');
}

function trendLine(m: ReportMetric): string {
  const parts: string[] = [];
  if (m.daily_average !== undefined && m.daily_average !== null) {
    parts.push(
      m.unit === 'ratio'
        ? `${percent(m.daily_average)} daily average`
        : `${m.daily_average.toLocaleString('en-US', { maximumFractionDigits: 2 })} a day`,
    );
  }
  if (m.growth_rate !== undefined) {
    parts.push(
      m.growth_rate === null
        ? 'no previous period'
        : `${m.growth_rate >= 0 ? '+' : ''}${percent(m.growth_rate)} vs previous period`,
    );
  }
  return parts.join(' · ');
}

/** The self-contained HTML analytics report: cards, three charts, two tables. */
export function analyticsHtml(header: ReportHeader, content: AnalyticsReportContent): string {
  const c = content.currency;
  const labels = content.daily.map((d) => d.date);
  const kinds = kindsOf(content);
  const out: Html[] = [
    htmlDocumentStart(
      `AI agent analytics: ${header.store}`,
      `${header.period!.start} to ${header.period!.end} (UTC) · generated ${header.generated_at} · report ${header.id}`,
    ),
  ];
  out.push(markup`<h2>Overview</h2>
<div class="cards">
`);
  for (const m of content.metrics) {
    const trend = trendLine(m);
    out.push(markup`<div class="card" data-metric="${m.name}"><div class="label">${m.label}</div><div class="value">${formatMetric(m, c)}</div>${trend ? markup`<div class="trend">${trend}</div>` : ''}</div>
`);
  }
  out.push(markup`</div>
`);
  out.push(markup`<p class="meta" id="revenue-by-currency">Revenue by currency: ${byCurrencyText(content.revenueByCurrency)}</p>
`);
  if (content.otherCurrencies.length > 0) {
    const others = content.otherCurrencies.map(
      (o) =>
        `${money(toMinorUnits(o.amount, o.currency), o.currency)} ${o.currency} (${o.conversions} conversions)`,
    );
    out.push(markup`<p class="meta">Conversions in other currencies, not in the revenue above: ${join(others, ', ')}</p>
`);
  }
  out.push(markup`<h2>Daily series</h2>
<figure id="chart-interactions"><figcaption>AI interactions by agent kind</figcaption>
${renderLineChart({
  title: 'AI interactions per day by agent kind',
  labels,
  series: kinds.map((k) => ({
    name: k,
    values: content.daily.map((d) => d.interactions[k] ?? 0),
  })),
  yLabel: 'Interactions',
  integer: true,
  xLabel: 'Day (UTC)',
})}</figure>
<figure id="chart-conversions"><figcaption>Conversions</figcaption>
${renderBarChart({
  title: 'Conversions per day',
  labels,
  series: [{ name: 'conversions', values: content.daily.map((d) => d.conversions) }],
  yLabel: 'Conversions',
  integer: true,
  xLabel: 'Day (UTC)',
})}</figure>
<figure id="chart-revenue"><figcaption>Revenue (${c})</figcaption>
${renderBarChart({
  title: `Revenue per day (${c})`,
  labels,
  series: [
    {
      name: 'revenue',
      values: content.daily.map((d) => Number(money(d.revenue_minor, c))),
      color: '#009E73',
    },
  ],
  yLabel: `Revenue (${c})`,
  xLabel: 'Day (UTC)',
})}</figure>
<h2>Top products</h2>
`);
  const productColumns: HtmlColumn<AnalyticsReportContent['topProducts'][number]>[] = [
    {
      label: 'Product',
      cell: (p) => markup`${isolatedText(p.name)}<br><small>${isolatedText(p.id)}</small>`,
    },
    { label: 'Interactions', numeric: true, cell: (p) => p.interactions.toLocaleString('en-US') },
    { label: 'Views', numeric: true, cell: (p) => p.views.toLocaleString('en-US') },
    { label: 'Clicks', numeric: true, cell: (p) => p.clicks.toLocaleString('en-US') },
    { label: 'Conversions', numeric: true, cell: (p) => p.conversions.toLocaleString('en-US') },
    { label: `Revenue (${c})`, numeric: true, cell: (p) => money(p.revenue_minor, c) },
    { label: 'Revenue, every currency', cell: (p) => byCurrencyText(p.revenue_by_currency) },
  ];
  out.push(
    htmlTable(
      productColumns,
      content.topProducts,
      'No product had an AI interaction in this period.',
    ),
  );
  out.push(markup`<h2>Top agents</h2>
`);
  const agentColumns: HtmlColumn<AnalyticsReportContent['topAgents'][number]>[] = [
    { label: 'Agent', cell: (a) => isolatedText(a.agent) },
    { label: 'Operator', cell: (a) => isolatedText(a.operator) },
    { label: 'Kind', cell: (a) => a.kind },
    { label: 'Interactions', numeric: true, cell: (a) => a.interactions.toLocaleString('en-US') },
  ];
  out.push(htmlTable(agentColumns, content.topAgents, 'No AI agent came in this period.'));
  out.push(htmlDocumentEnd());
  return markup`${out}`.value;
}
