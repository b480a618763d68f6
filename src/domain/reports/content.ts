import type { Executor } from '../../db/transaction.js';
import type { ReportPeriod } from './period.js';

/**
 * What an analytics report shows, gathered from the analytics store before anything is
 * written (src/domain/reports/analytics-source.ts), so the renderers (src/reports/) only format.
 */

/** Agent kinds in the order the charts and tables show them (CONTRACT part 9). */
export const AGENT_KINDS = ['assistant', 'search', 'training', 'agent'] as const;

export interface ReportMetric {
  /** The metric's API name: total_products, ai_interactions, ... */
  name: string;
  label: string;
  unit: 'count' | 'ratio' | 'money';
  /** Counts and ratios as they are; money in minor units of the report's currency. */
  value: number | null;
  /** Trends, where the metric has them. */
  daily_average?: number | null;
  growth_rate?: number | null;
}

export interface ReportDay {
  /** YYYY-MM-DD (UTC). */
  date: string;
  /** AI interactions by agent kind. */
  interactions: Record<string, number>;
  conversions: number;
  /** Minor units of the report's currency. */
  revenue_minor: number;
}

export interface ReportProductLine {
  id: string;
  name: string;
  interactions: number;
  views: number;
  clicks: number;
  conversions: number;
  revenue_minor: number;
  /** Its revenue in every currency it sold in, each on its own (CONTRACT part 9). */
  revenue_by_currency: Record<string, number>;
}

export interface ReportAgentLine {
  agent: string;
  operator: string;
  kind: string;
  interactions: number;
}

export interface AnalyticsReportContent {
  currency: string;
  metrics: ReportMetric[];
  /** One entry per day of the period, in order, days without data included. */
  daily: ReportDay[];
  /** Conversions in other currencies: never summed into revenue, shown apart. */
  otherCurrencies: { currency: string; conversions: number; amount: number }[];
  /** Revenue in every currency, each summed on its own: {"USD": 359.98, "EUR": 119}. */
  revenueByCurrency: Record<string, number>;
  topProducts: ReportProductLine[];
  topAgents: ReportAgentLine[];
}

/** Per-product analytics of the products report, for a page of product ids. */
export interface ProductAnalyticsLine {
  interactions: number;
  views: number;
  clicks: number;
  conversions: number;
  revenue_minor: number;
}

/** Where the analytics numbers of a report come from (the analytics store; analytics-source.ts). */
export interface ReportSources {
  analytics(db: Executor, period: ReportPeriod): Promise<AnalyticsReportContent>;
  /** Per-product analytics of the period for these ids (absent ids had none). */
  productAnalytics(
    db: Executor,
    period: ReportPeriod,
    ids: readonly string[],
  ): Promise<Map<string, ProductAnalyticsLine>>;
}
