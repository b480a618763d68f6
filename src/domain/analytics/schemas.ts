import { z } from 'zod';
import { METRIC_NAMES, PRODUCT_SORTS } from './metrics.js';

// --- The events API (POST /v1/analytics/events) ---

export const MAX_EVENTS = 1000;

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Date.parse reads 2026-11-31 as December 1st; refuse days the month does not have. */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(y, m - 1, d));
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

export const EventDateTime = z.string().check((ctx) => {
  const v = ctx.value;
  if (!DATE_TIME.test(v) || !isCalendarDate(v) || Number.isNaN(Date.parse(v))) {
    ctx.issues.push({
      code: 'custom',
      input: v,
      message: 'must be an ISO 8601 date-time with a zone (2026-11-21T10:00:00Z)',
    });
  }
});

export const AnalyticsEventInput = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, 'must be 1 to 200 letters, digits, ".", "_", ":" or "-"')
    .optional(),
  type: z.enum(['view', 'click', 'conversion']),
  product_id: z.string().min(1).max(200),
  occurred_at: EventDateTime.optional(),
  agent: z.string().min(1).max(200).nullable().optional(),
  amount: z.union([z.number(), z.string().max(40)]).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code')
    .optional(),
});
export type AnalyticsEventInput = z.infer<typeof AnalyticsEventInput>;

export const AnalyticsEventBatch = z.strictObject({
  events: z.array(AnalyticsEventInput).min(1).max(MAX_EVENTS),
});

/** One event, or up to 1,000 as `{events: [...]}`. */
export const AnalyticsEventsBody = z.union([AnalyticsEventBatch, AnalyticsEventInput]);

export const AnalyticsEventsResult = z.object({
  received: z.int(),
  stored: z.int(),
  duplicates: z.int(),
});

// --- The reads ---

const QueryDay = z.string().check((ctx) => {
  const v = ctx.value;
  if ((!DATE.test(v) && !DATE_TIME.test(v)) || !isCalendarDate(v) || Number.isNaN(Date.parse(v))) {
    ctx.issues.push({
      code: 'custom',
      input: v,
      message: 'must be a date (2026-11-21) or a date-time with a zone (2026-11-21T10:00:00Z)',
    });
  }
});
/** A query date as its UTC day. */
const utcDay = QueryDay.transform((v) =>
  DATE.test(v) ? v : new Date(Date.parse(v)).toISOString().slice(0, 10),
);

export const PeriodQuery = z.strictObject({
  start_date: utcDay.optional(),
  end_date: utcDay.optional(),
});

export const AnalyticsQuery = PeriodQuery.extend({ metric: z.enum(METRIC_NAMES).optional() });
export const ProductSortField = z.enum(PRODUCT_SORTS as [string, ...string[]]);

const PeriodOut = z.object({ start_date: z.string(), end_date: z.string(), days: z.int() });
const Growth = z.object({ daily_average: z.number(), growth_rate: z.number().nullable() });
export const OtherCurrency = z.object({
  currency: z.string(),
  conversions: z.int(),
  amount: z.number(),
});

/** Revenue in every currency, each summed on its own (CONTRACT part 9). */
export const RevenueByCurrency = z.record(z.string(), z.number());

export const AnalyticsResult = z.object({
  period: PeriodOut,
  currency: z.string(),
  metrics: z.object({
    total_products: z.int().optional(),
    ai_interactions: z.int().optional(),
    discovery_rate: z.number().optional(),
    conversion_rate: z.number().optional(),
    revenue: z.number().optional(),
    revenue_by_currency: RevenueByCurrency.optional(),
  }),
  trends: z.object({
    ai_interactions: Growth.optional(),
    conversion_rate: Growth.optional(),
  }),
  other_currencies: z.array(OtherCurrency).optional(),
});
export const AnalyticsResponse = z.object({ analytics: AnalyticsResult });

const ByKind = z.object({
  total: z.int(),
  assistant: z.int(),
  search: z.int(),
  training: z.int(),
  agent: z.int(),
});

export const DailyPoint = z.object({
  date: z.string(),
  interactions: ByKind,
  bots: z.int(),
  humans: z.int(),
  conversions: z.int(),
  revenue: z.number(),
  other_currencies: z.array(OtherCurrency),
});

export const AgentBreakdown = z.object({
  agents: z.array(
    z.object({
      agent: z.string().nullable(),
      operator: z.string().nullable(),
      kind: z.string(),
      interactions: z.int(),
      verified: z.int(),
    }),
  ),
  operators: z.array(z.object({ operator: z.string().nullable(), interactions: z.int() })),
  kinds: z.object({ assistant: z.int(), search: z.int(), training: z.int(), agent: z.int() }),
  other: z.object({ bots: z.int(), humans: z.int() }),
});

export const AiInteractionsResponse = z.object({
  period: PeriodOut,
  total: z.int(),
  series: z.array(DailyPoint),
  breakdown: AgentBreakdown,
});

export const ConversionsResponse = z.object({
  period: PeriodOut,
  currency: z.string(),
  conversions: z.int(),
  revenue: z.number(),
  conversion_rate: z.number(),
  other_currencies: z.array(OtherCurrency),
  revenue_by_currency: RevenueByCurrency,
  series: z.array(
    z.object({
      date: z.string(),
      conversions: z.int(),
      revenue: z.number(),
      other_currencies: z.array(OtherCurrency),
    }),
  ),
});

export const ProductAnalyticsPage = z.object({
  period: PeriodOut,
  currency: z.string(),
  products: z.array(
    z.object({
      product_id: z.string(),
      name: z.string().nullable(),
      interactions: ByKind,
      views: z.int(),
      clicks: z.int(),
      conversions: z.int(),
      revenue: z.number(),
      other_currencies: z.array(OtherCurrency),
      revenue_by_currency: RevenueByCurrency,
    }),
  ),
  pagination: z.object({
    limit: z.int(),
    offset: z.int(),
    total: z.int(),
    has_more: z.boolean(),
  }),
});

const SearchTotal = z.object({ query: z.string(), searches: z.int(), no_results: z.int() });

export const SearchAnalyticsResponse = z.object({
  period: PeriodOut,
  top_queries: z.array(SearchTotal),
  top_without_results: z.array(SearchTotal),
});
