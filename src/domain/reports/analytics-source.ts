import { productTotalsForIds } from '../../db/queries/reports.js';
import type { Executor } from '../../db/transaction.js';
import {
  agentBreakdown,
  analyticsOverview,
  dailySeries,
  productAnalytics,
} from '../analytics/metrics.js';
import { toMinorUnits } from '../money.js';
import type {
  AnalyticsReportContent,
  ProductAnalyticsLine,
  ReportMetric,
  ReportSources,
} from './content.js';
import type { ReportPeriod } from './period.js';

/** Rows in the top products and top agents tables. */
export const TOP_ROWS = 10;

/**
 * The analytics numbers a report shows, read from the analytics store (the same functions
 * GET /v1/analytics answers with), so a report and the API always agree.
 */
export function analyticsReportSources(options: {
  currency: string;
  storeName: string;
}): ReportSources {
  const { currency, storeName } = options;
  return {
    async analytics(db: Executor, period: ReportPeriod): Promise<AnalyticsReportContent> {
      const overview = await analyticsOverview(db, period, { currency, storeName });
      const daily = await dailySeries(db, period, { currency });
      const top = await productAnalytics(
        db,
        period,
        { limit: TOP_ROWS, offset: 0, sort: 'interactions' },
        { currency, storeName },
      );
      const agents = await agentBreakdown(db, period);
      const m = overview.metrics;
      const t = overview.trends;
      const metrics: ReportMetric[] = [
        {
          name: 'total_products',
          label: 'Active products',
          unit: 'count',
          value: m.total_products ?? null,
        },
        {
          name: 'ai_interactions',
          label: 'AI interactions',
          unit: 'count',
          value: m.ai_interactions ?? null,
          daily_average: t.ai_interactions?.daily_average ?? null,
          growth_rate: t.ai_interactions?.growth_rate ?? null,
        },
        {
          name: 'discovery_rate',
          label: 'Products discovered by agents',
          unit: 'ratio',
          value: m.discovery_rate ?? null,
        },
        {
          name: 'conversion_rate',
          label: 'Conversion rate',
          unit: 'ratio',
          value: m.conversion_rate ?? null,
          daily_average: t.conversion_rate?.daily_average ?? null,
          growth_rate: t.conversion_rate?.growth_rate ?? null,
        },
        {
          name: 'revenue',
          label: `Revenue (${currency})`,
          unit: 'money',
          value: m.revenue === undefined ? null : toMinorUnits(m.revenue, currency),
        },
      ];
      return {
        currency,
        metrics,
        daily: daily.map((d) => ({
          date: d.date,
          interactions: {
            assistant: d.interactions.assistant,
            search: d.interactions.search,
            training: d.interactions.training,
            agent: d.interactions.agent,
          },
          conversions: d.conversions,
          revenue_minor: toMinorUnits(d.revenue, currency),
        })),
        otherCurrencies: overview.other_currencies ?? [],
        revenueByCurrency: m.revenue_by_currency ?? {},
        topProducts: top.products.map((p) => ({
          id: p.product_id,
          name: p.name ?? '(deleted product)',
          interactions: p.interactions.total,
          views: p.views,
          clicks: p.clicks,
          conversions: p.conversions,
          revenue_minor: toMinorUnits(p.revenue, currency),
          revenue_by_currency: p.revenue_by_currency,
        })),
        topAgents: agents.agents.slice(0, TOP_ROWS).map((a) => ({
          agent: a.agent ?? '(unnamed agent)',
          operator: a.operator ?? '',
          kind: a.kind,
          interactions: a.interactions,
        })),
      };
    },
    async productAnalytics(db, period, ids): Promise<Map<string, ProductAnalyticsLine>> {
      const totals = await productTotalsForIds(db, period.start, period.end, ids);
      const lines = new Map<string, ProductAnalyticsLine>();
      for (const [id, c] of totals) {
        lines.set(id, {
          interactions: c.interactions,
          views: c.views,
          clicks: c.clicks,
          conversions: c.conversions,
          revenue_minor: c.revenue_minor,
        });
      }
      return lines;
    },
  };
}
