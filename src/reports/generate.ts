import type { FeedRow, ReportRow } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { listAllFeedRows, listCatalogueReportPage } from '../db/queries/reports.js';
import { readCatalogueProduct, type CatalogueRow } from '../domain/catalogue/product.js';
import type { FeedDiagnostics } from '../domain/feeds/schemas.js';
import { formatMinorUnits } from '../domain/money.js';
import type { ProductAnalyticsLine, ReportSources } from '../domain/reports/content.js';
import { reportHeader, type ReportHeader } from '../domain/reports/header.js';
import type { ReportPeriod } from '../domain/reports/period.js';
import { markup } from '../markup.js';
import { analyticsCsv, analyticsHtml, analyticsJson } from './analytics-report.js';
import { csvRows } from './csv.js';
import {
  htmlDocumentEnd,
  htmlDocumentStart,
  htmlTable,
  htmlTableEnd,
  htmlTableRows,
  htmlTableStart,
  isolatedText,
  type HtmlColumn,
} from './html.js';

export type { ReportSources } from '../domain/reports/content.js';

export interface GenerateContext {
  /** Reads: a read transaction on a connection of its own, for one consistent snapshot. */
  db: Executor;
  sources: ReportSources;
  storeName: string;
  currency: string;
  now: Date;
  /** Products read per page (the catalogue is never in memory at once). */
  pageSize?: number;
  /** Aborted when the server stops: generation ends between pages. */
  signal?: AbortSignal;
}

export interface ReportSink {
  write(text: string): Promise<void>;
}

const NO_ANALYTICS: ProductAnalyticsLine = {
  interactions: 0,
  views: 0,
  clicks: 0,
  conversions: 0,
  revenue_minor: 0,
};

function periodOf(row: ReportRow): ReportPeriod {
  if (!row.start_date || !row.end_date) throw new Error(`report ${row.id} has no period`);
  return { start: row.start_date, end: row.end_date };
}

/** Writes a report's file content through `sink`. */
export async function generateReport(
  row: ReportRow,
  sink: ReportSink,
  ctx: GenerateContext,
): Promise<void> {
  const header = reportHeader(row, ctx.storeName, ctx.now);
  switch (row.type) {
    case 'analytics': {
      const content = await ctx.sources.analytics(ctx.db, periodOf(row));
      if (row.format === 'json') await sink.write(analyticsJson(header, content));
      else if (row.format === 'csv') await sink.write(analyticsCsv(content));
      else await sink.write(analyticsHtml(header, content));
      return;
    }
    case 'products':
      return writeProductsReport(row, header, sink, ctx);
    case 'feed_diagnostics':
      return writeFeedDiagnosticsReport(row, header, sink, ctx);
  }
}

interface ProductLine extends ProductAnalyticsLine {
  id: string;
  name: string;
  status: string;
  brand: string;
  category: string | null;
  price: string;
  currency: string;
  availability: string;
  created_at: string;
  updated_at: string;
}

function productLine(
  row: CatalogueRow,
  storeName: string,
  analytics: ProductAnalyticsLine,
): ProductLine {
  const p = readCatalogueProduct(row, { storeName });
  return {
    id: p.id,
    name: p.name,
    status: p.status,
    brand: p.brand,
    category: p.category,
    price: formatMinorUnits(p.price.minor, p.price.currency),
    currency: p.price.currency,
    availability: p.availability,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    ...analytics,
  };
}

const PRODUCT_CSV_HEADER = [
  'id',
  'name',
  'status',
  'brand',
  'category',
  'price',
  'currency',
  'availability',
  'created_at',
  'updated_at',
  'interactions',
  'views',
  'clicks',
  'conversions',
] as const;

/**
 * The whole catalogue, a page at a time, each product with its analytics of the period
 * (revenue in DEFAULT_CURRENCY).
 */
async function writeProductsReport(
  row: ReportRow,
  header: ReportHeader,
  sink: ReportSink,
  ctx: GenerateContext,
): Promise<void> {
  const period = periodOf(row);
  const c = ctx.currency;
  const columns: HtmlColumn<ProductLine>[] = [
    {
      label: 'Product',
      cell: (p) => markup`${isolatedText(p.name)}<br><small>${isolatedText(p.id)}</small>`,
    },
    { label: 'Status', cell: (p) => p.status },
    { label: 'Brand', cell: (p) => isolatedText(p.brand) },
    { label: 'Category', cell: (p) => (p.category ? isolatedText(p.category) : '') },
    { label: 'Price', numeric: true, cell: (p) => `${p.price} ${p.currency}` },
    { label: 'Interactions', numeric: true, cell: (p) => p.interactions },
    { label: 'Views', numeric: true, cell: (p) => p.views },
    { label: 'Clicks', numeric: true, cell: (p) => p.clicks },
    { label: 'Conversions', numeric: true, cell: (p) => p.conversions },
    {
      label: `Revenue (${c})`,
      numeric: true,
      cell: (p) => formatMinorUnits(p.revenue_minor, c),
    },
  ];
  if (row.format === 'csv') {
    await sink.write(csvRows([[...PRODUCT_CSV_HEADER, `revenue_${c}`]]));
  } else if (row.format === 'json') {
    await sink.write(
      `{"report":${JSON.stringify(header)},"currency":${JSON.stringify(c)},"products":[`,
    );
  } else {
    await sink.write(
      markup`${htmlDocumentStart(
        `Products: ${ctx.storeName}`,
        `Analytics for ${period.start} to ${period.end} (UTC) · generated ${header.generated_at} · report ${header.id}`,
      )}${htmlTableStart(columns)}`.value,
    );
  }
  let after: CatalogueRow | undefined;
  let first = true;
  const pageSize = ctx.pageSize ?? 1000;
  for (;;) {
    ctx.signal?.throwIfAborted();
    const page = await listCatalogueReportPage(ctx.db, after, pageSize);
    if (page.length === 0) break;
    const analytics = await ctx.sources.productAnalytics(
      ctx.db,
      period,
      page.map((r) => r.id),
    );
    const lines = page.map((r) =>
      productLine(r, ctx.storeName, analytics.get(r.id) ?? NO_ANALYTICS),
    );
    if (row.format === 'csv') {
      await sink.write(
        csvRows(
          lines.map((l) => [
            ...PRODUCT_CSV_HEADER.map((k) => l[k]),
            formatMinorUnits(l.revenue_minor, c),
          ]),
        ),
      );
    } else if (row.format === 'json') {
      let text = '';
      for (const l of lines) {
        const { revenue_minor, ...rest } = l;
        text += `${first ? '\n' : ',\n'}${JSON.stringify({ ...rest, revenue: Number(formatMinorUnits(revenue_minor, c)) })}`;
        first = false;
      }
      await sink.write(text);
    } else {
      await sink.write(htmlTableRows(columns, lines).value);
    }
    after = page[page.length - 1];
    if (page.length < pageSize) break;
  }
  if (row.format === 'json') await sink.write('\n]}\n');
  else if (row.format === 'html')
    await sink.write(markup`${htmlTableEnd()}${htmlDocumentEnd()}`.value);
}

type StoredDiagnostics = Omit<FeedDiagnostics, 'url'>;

function diagnosticsOf(feed: FeedRow): StoredDiagnostics | null {
  return feed.diagnostics ? (JSON.parse(feed.diagnostics) as StoredDiagnostics) : null;
}

/** Every feed with its last run's diagnostics (the issues summed per kind). */
async function writeFeedDiagnosticsReport(
  row: ReportRow,
  header: ReportHeader,
  sink: ReportSink,
  ctx: GenerateContext,
): Promise<void> {
  const feeds = (await listAllFeedRows(ctx.db)).map((f) => ({
    feed: f,
    diagnostics: diagnosticsOf(f),
  }));
  if (row.format === 'json') {
    const document = {
      report: header,
      feeds: feeds.map(({ feed, diagnostics }) => ({
        id: feed.id,
        name: feed.name,
        format: feed.format,
        status: feed.status,
        product_count: feed.product_count,
        last_updated: feed.last_updated,
        generated_at: feed.generated_at,
        last_error: feed.last_error,
        diagnostics,
      })),
    };
    await sink.write(`${JSON.stringify(document, null, 2)}\n`);
    return;
  }
  if (row.format === 'csv') {
    const rows: (string | number | null)[][] = [
      [
        'feed_id',
        'feed_name',
        'format',
        'status',
        'product_count',
        'generated_at',
        'products_with_errors',
        'products_with_warnings',
        'issue_code',
        'field',
        'problem',
        'severity',
        'products_affected',
        'message',
      ],
    ];
    for (const { feed, diagnostics } of feeds) {
      const base = [
        feed.id,
        feed.name,
        feed.format,
        feed.status,
        feed.product_count,
        feed.generated_at,
        diagnostics?.products_with_errors ?? null,
        diagnostics?.products_with_warnings ?? null,
      ];
      const issues = diagnostics?.issues ?? [];
      if (issues.length === 0) rows.push([...base, null, null, null, null, null, null]);
      for (const i of issues) {
        rows.push([...base, i.code, i.field, i.problem, i.severity, i.count, i.message]);
      }
    }
    await sink.write(csvRows(rows));
    return;
  }
  const out = [
    htmlDocumentStart(
      `Feed diagnostics: ${ctx.storeName}`,
      `The feeds as of ${header.generated_at} · report ${header.id}`,
    ),
    markup`<h2>Feeds</h2>
`,
  ];
  out.push(
    htmlTable(
      [
        {
          label: 'Feed',
          cell: (f) => markup`${isolatedText(f.feed.name)}<br><small>${f.feed.id}</small>`,
        },
        { label: 'Format', cell: (f) => f.feed.format },
        { label: 'Status', cell: (f) => f.feed.status },
        { label: 'Products', numeric: true, cell: (f) => f.feed.product_count },
        {
          label: 'With errors',
          numeric: true,
          cell: (f) => f.diagnostics?.products_with_errors ?? '–',
        },
        {
          label: 'With warnings',
          numeric: true,
          cell: (f) => f.diagnostics?.products_with_warnings ?? '–',
        },
        { label: 'Last generated', cell: (f) => f.feed.generated_at ?? 'never' },
        {
          label: 'Last error',
          cell: (f) => (f.feed.last_error ? isolatedText(f.feed.last_error) : ''),
        },
      ],
      feeds,
      'No feed is defined yet.',
    ),
  );
  for (const { feed, diagnostics } of feeds) {
    out.push(markup`<h2>${isolatedText(feed.name)}: issues</h2>
`);
    out.push(
      htmlTable(
        [
          { label: 'Issue', cell: (i) => i.code },
          { label: 'Severity', cell: (i) => i.severity },
          { label: 'Products', numeric: true, cell: (i) => i.count },
          { label: 'What to do', cell: (i) => isolatedText(i.message) },
        ],
        diagnostics?.issues ?? [],
        diagnostics ? 'No issue in the last run.' : 'Not generated yet.',
      ),
    );
  }
  out.push(htmlDocumentEnd());
  await sink.write(markup`${out}`.value);
}
