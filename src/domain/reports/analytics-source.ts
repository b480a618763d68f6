import { countProducts } from '../../db/queries/products.js';
import type { Executor } from '../../db/transaction.js';
import type { AnalyticsReportContent, ProductAnalyticsLine } from './content.js';
import type { ReportSources } from './generate.js';
import { eachDay, type ReportPeriod } from './period.js';

/**
 * The analytics numbers a report shows. Interim: the analytics store (issue 13 item 1-5) is
 * being built beside this; until it is merged, only total_products is counted.
 */
export function analyticsReportSources(currency: string): ReportSources {
  return {
    async analytics(db: Executor, period: ReportPeriod): Promise<AnalyticsReportContent> {
      const total = await countProducts(db, { status: 'active' });
      return {
        currency,
        metrics: [
          { name: 'total_products', label: 'Active products', unit: 'count', value: total },
        ],
        daily: eachDay(period).map((date) => ({
          date,
          interactions: {},
          conversions: 0,
          revenue_minor: 0,
        })),
        topProducts: [],
        topAgents: [],
      };
    },
    async productAnalytics(): Promise<Map<string, ProductAnalyticsLine>> {
      return new Map();
    },
  };
}
