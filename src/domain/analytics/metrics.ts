/**
 * The analytics metrics, exactly as CONTRACT part 9 defines them, read from the daily rollups
 * (never from raw interactions), so an answer costs the same at any traffic.
 */
import {
  AI_KINDS,
  aiInteractionsByDay as aiInteractionsByDayUncached,
  countActiveProducts,
  countNamedOutsideBrands,
  countViaBrands,
  discoveryBrandCounts,
  fetchedBrandSlugs,
  otherCurrencyRevenue,
  periodTotals as periodTotalsUncached,
  productNames,
  productTotalsPage,
  revenueByDay as revenueByDayUncached,
  trafficByAgent,
  type ProductSort,
} from '../../db/queries/analytics.js';
import type { Executor } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { fromMinorUnits } from '../money.js';
import { presentPagination } from '../pagination.js';
import { keptAnswer } from './answer-cache.js';

// The rollup reads are kept until the rollups change (answer-cache.ts): a period's answer
// costs its aggregation once, however often a dashboard asks.
const aiInteractionsByDay = (db: Executor, start: string, end: string) =>
  keptAnswer(db, `aiByDay\u0000${start}\u0000${end}`, ['traffic'], () =>
    aiInteractionsByDayUncached(db, start, end),
  );
const revenueByDay = (db: Executor, start: string, end: string) =>
  keptAnswer(db, `revenueByDay\u0000${start}\u0000${end}`, ['products'], () =>
    revenueByDayUncached(db, start, end),
  );
const periodTotals = (db: Executor, start: string, end: string) =>
  keptAnswer(db, `totals\u0000${start}\u0000${end}`, ['traffic', 'products'], () =>
    periodTotalsUncached(db, start, end),
  );

/**
 * Products discovered in a period (CONTRACT part 9): the published products of every brand
 * whose page or feed an AI agent fetched, plus the active products the rollups name that are
 * not of such a brand (queries/analytics.ts).
 */
async function countDiscovered(db: Executor, period: Period, storeName: string): Promise<number> {
  const { start, end } = period;
  const [fetched, brands] = await Promise.all([
    keptAnswer(db, `fetchedBrands\u0000${start}\u0000${end}`, ['traffic'], () =>
      fetchedBrandSlugs(db, start, end),
    ),
    discoveryBrandCounts(db),
  ]);
  // Which brands were fetched changes far less often than the traffic: the products named
  // outside them are kept with that set (in the key), not with every request recorded.
  const named = await keptAnswer(
    db,
    `named\u0000${start}\u0000${end}\u0000${storeName}\u0000${[...fetched].sort().join(',')}`,
    ['products', 'brands', 'catalogue'],
    () => countNamedOutsideBrands(db, start, end, storeName, fetched),
  );
  return countViaBrands(brands, fetched) + named;
}

/** A period of whole UTC days, both ends included. */
export interface Period {
  /** First day, `YYYY-MM-DD`. */
  start: string;
  /** Last day, `YYYY-MM-DD`. */
  end: string;
}

export interface MetricOptions {
  /** DEFAULT_CURRENCY: revenue is the sum of conversions in it (default USD). */
  currency?: string;
  /** STORE_NAME: the brand of products that name none (default My Store). */
  storeName?: string;
}

export const METRIC_NAMES = [
  'total_products',
  'ai_interactions',
  'discovery_rate',
  'conversion_rate',
  'revenue',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

const DAY_MS = 86_400_000;
/** The longest period answered: ten years of days. */
export const MAX_PERIOD_DAYS = 3660;
export const DEFAULT_PERIOD_DAYS = 30;

const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Days in a period. */
export function periodDays(period: Period): number {
  return Math.round((dayMs(period.end) - dayMs(period.start)) / DAY_MS) + 1;
}

/** Every day of a period, in order. */
export function daysOf(period: Period): string[] {
  const days: string[] = [];
  for (let ms = dayMs(period.start); ms <= dayMs(period.end); ms += DAY_MS) days.push(dayOf(ms));
  return days;
}

/** The period of the same length that ends the day before this one starts. */
export function previousPeriod(period: Period): Period {
  const n = periodDays(period);
  const start = dayMs(period.start);
  return { start: dayOf(start - n * DAY_MS), end: dayOf(start - DAY_MS) };
}

/**
 * The period a query asks for: start_date and end_date are UTC days (a date-time counts as
 * its UTC day). Default: the last 30 days ending today; one end given, the other is 29 days
 * away. An end before the start, or a period longer than MAX_PERIOD_DAYS, is 400.
 */
export function resolvePeriod(
  query: { start_date?: string | undefined; end_date?: string | undefined },
  now: Date,
): Period {
  const span = (DEFAULT_PERIOD_DAYS - 1) * DAY_MS;
  const startQ = query.start_date?.slice(0, 10);
  const endQ = query.end_date?.slice(0, 10);
  let start: string;
  let end: string;
  if (startQ && endQ) [start, end] = [startQ, endQ];
  else if (startQ) [start, end] = [startQ, dayOf(dayMs(startQ) + span)];
  else if (endQ) [start, end] = [dayOf(dayMs(endQ) - span), endQ];
  else {
    end = dayOf(now.getTime());
    start = dayOf(dayMs(end) - span);
  }
  if (end < start) {
    throw new AppError('invalid_query_parameter', 'end_date must not be before start_date.', {
      field: 'end_date',
      reason: 'must not be before start_date',
    });
  }
  if (periodDays({ start, end }) > MAX_PERIOD_DAYS) {
    throw new AppError(
      'invalid_query_parameter',
      `The period may span at most ${MAX_PERIOD_DAYS} days.`,
      { field: 'start_date', reason: `must be at most ${MAX_PERIOD_DAYS} days before end_date` },
    );
  }
  return { start, end };
}

/** The period as the API shows it: its first and last moments (ISO 8601 UTC). */
export function presentPeriod(period: Period) {
  return {
    start_date: `${period.start}T00:00:00.000Z`,
    end_date: `${period.end}T23:59:59.999Z`,
    days: periodDays(period),
  };
}

/** Fractions and averages are given to 6 decimals. */
const round = (n: number) => Math.round(n * 1e6) / 1e6;
const ratio = (a: number, b: number) => (b === 0 ? 0 : round(a / b));
/** Change against the previous value as a fraction; null when the previous value was nothing. */
const growth = (current: number, previous: number) =>
  previous === 0 ? null : round((current - previous) / previous);

export interface OtherCurrency {
  currency: string;
  conversions: number;
  amount: number;
}

/**
 * Revenue in every currency, each summed on its own (CONTRACT part 9): {"USD": 359.98, "EUR":
 * 119}, by code. The default currency is there when it has revenue or nothing else has (so an
 * empty period is {"USD": 0}); a conversion in another currency is never shown as 0.
 */
export function revenueByCurrency(
  currency: string,
  revenue: number,
  other: readonly OtherCurrency[],
): Record<string, number> {
  const entries: [string, number][] = other.map((o) => [o.currency, o.amount]);
  if (revenue !== 0 || entries.length === 0) entries.push([currency, revenue]);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/** A product's totals with their revenue in every currency. */
function withRevenueByCurrency(
  currency: string,
  p: Omit<ProductAnalytics, 'revenue_by_currency'>,
): ProductAnalytics {
  return {
    ...p,
    revenue_by_currency: revenueByCurrency(currency, p.revenue, p.other_currencies),
  };
}

export interface AnalyticsResult {
  period: ReturnType<typeof presentPeriod>;
  /** The currency of `revenue` (DEFAULT_CURRENCY). */
  currency: string;
  metrics: Partial<Record<MetricName, number>> & { revenue_by_currency?: Record<string, number> };
  trends: {
    ai_interactions?: { daily_average: number; growth_rate: number | null };
    conversion_rate?: { daily_average: number; growth_rate: number | null };
  };
  /** Conversions in other currencies, never summed into revenue. */
  other_currencies?: OtherCurrency[];
}

interface Daily {
  ai: Map<string, number>;
  conversions: Map<string, number>;
  revenue: Map<string, number>;
  other: Map<string, { conversions: number; amount_minor: number }>;
  otherByDay: Map<string, Map<string, { conversions: number; amount_minor: number }>>;
}

async function readDaily(db: Executor, period: Period, currency: string): Promise<Daily> {
  const [traffic, revenue] = await Promise.all([
    aiInteractionsByDay(db, period.start, period.end),
    revenueByDay(db, period.start, period.end),
  ]);
  const daily: Daily = {
    ai: new Map(),
    conversions: new Map(),
    revenue: new Map(),
    other: new Map(),
    otherByDay: new Map(),
  };
  for (const t of traffic) {
    if (!AI_KINDS.includes(t.kind)) continue;
    daily.ai.set(t.day, (daily.ai.get(t.day) ?? 0) + t.interactions);
  }
  for (const r of revenue) {
    daily.conversions.set(r.day, (daily.conversions.get(r.day) ?? 0) + r.conversions);
    if (r.currency === currency) {
      daily.revenue.set(r.day, (daily.revenue.get(r.day) ?? 0) + r.amount_minor);
    } else {
      const o = daily.other.get(r.currency) ?? { conversions: 0, amount_minor: 0 };
      o.conversions += r.conversions;
      o.amount_minor += r.amount_minor;
      daily.other.set(r.currency, o);
      const byDay = daily.otherByDay.get(r.day) ?? new Map();
      byDay.set(r.currency, { conversions: r.conversions, amount_minor: r.amount_minor });
      daily.otherByDay.set(r.day, byDay);
    }
  }
  return daily;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

function presentOther(
  other: Map<string, { conversions: number; amount_minor: number }>,
): OtherCurrency[] {
  return [...other.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, o]) => ({
      currency,
      conversions: o.conversions,
      amount: fromMinorUnits(o.amount_minor, currency),
    }));
}

/**
 * GET /v1/analytics: the metrics of a period and their trends (CONTRACT part 9); `metric`
 * restricts the answer to one metric (and its trend, when it has one).
 */
export async function analyticsOverview(
  db: Executor,
  period: Period,
  options: MetricOptions & { metric?: MetricName | undefined } = {},
): Promise<AnalyticsResult> {
  return keptAnswer(
    db,
    `overview\u0000${period.start}\u0000${period.end}\u0000${options.metric ?? ''}\u0000${options.currency ?? ''}\u0000${options.storeName ?? ''}`,
    ['traffic', 'products', 'brands', 'catalogue'],
    () => computeOverview(db, period, options),
  );
}

async function computeOverview(
  db: Executor,
  period: Period,
  options: MetricOptions & { metric?: MetricName | undefined },
): Promise<AnalyticsResult> {
  const currency = options.currency ?? 'USD';
  const want = (m: MetricName) => !options.metric || options.metric === m;
  const needsTotals = want('ai_interactions') || want('conversion_rate') || want('revenue');
  const previous = previousPeriod(period);
  const [totalProducts, daily, before, discovered] = await Promise.all([
    want('total_products') || want('discovery_rate') ? countActiveProducts(db) : 0,
    needsTotals ? readDaily(db, period, currency) : undefined,
    want('ai_interactions') || want('conversion_rate')
      ? periodTotals(db, previous.start, previous.end)
      : undefined,
    want('discovery_rate') ? countDiscovered(db, period, options.storeName ?? 'My Store') : 0,
  ]);
  const ai = daily ? sum(daily.ai) : 0;
  const conversions = daily ? sum(daily.conversions) : 0;
  const days = daysOf(period);
  const metrics: AnalyticsResult['metrics'] = {};
  const trends: AnalyticsResult['trends'] = {};
  if (want('total_products')) metrics.total_products = totalProducts;
  if (want('ai_interactions')) {
    metrics.ai_interactions = ai;
    trends.ai_interactions = {
      daily_average: round(ai / days.length),
      growth_rate: growth(ai, before!.ai_interactions),
    };
  }
  if (want('discovery_rate')) {
    metrics.discovery_rate = ratio(Math.min(discovered, totalProducts), totalProducts);
  }
  if (want('conversion_rate')) {
    metrics.conversion_rate = ratio(conversions, ai);
    const dailyRates = days.map((d) =>
      ratio(daily!.conversions.get(d) ?? 0, daily!.ai.get(d) ?? 0),
    );
    const previousRate =
      before!.ai_interactions === 0 ? 0 : before!.conversions / before!.ai_interactions;
    trends.conversion_rate = {
      daily_average: round(dailyRates.reduce((a, b) => a + b, 0) / days.length),
      growth_rate: growth((conversions / (ai || 1)) * (ai ? 1 : 0), previousRate),
    };
  }
  const result: AnalyticsResult = { period: presentPeriod(period), currency, metrics, trends };
  if (want('revenue')) {
    metrics.revenue = fromMinorUnits(sum(daily!.revenue), currency);
    result.other_currencies = presentOther(daily!.other);
    metrics.revenue_by_currency = revenueByCurrency(
      currency,
      metrics.revenue,
      result.other_currencies,
    );
  }
  return result;
}

export interface DailyPoint {
  date: string;
  /** AI interactions by kind, and their total. */
  interactions: {
    total: number;
    assistant: number;
    search: number;
    training: number;
    agent: number;
  };
  /** Other bots and people, counted apart (not AI interactions). */
  bots: number;
  humans: number;
  conversions: number;
  /** Conversions in DEFAULT_CURRENCY. */
  revenue: number;
  other_currencies: OtherCurrency[];
}

/** Per day of the period (every day, zeros included): interactions by kind, conversions, revenue. */
export async function dailySeries(
  db: Executor,
  period: Period,
  options: MetricOptions = {},
): Promise<DailyPoint[]> {
  return keptAnswer(
    db,
    `series\u0000${period.start}\u0000${period.end}\u0000${options.currency ?? ''}`,
    ['traffic', 'products'],
    () => computeSeries(db, period, options),
  );
}

async function computeSeries(
  db: Executor,
  period: Period,
  options: MetricOptions,
): Promise<DailyPoint[]> {
  const currency = options.currency ?? 'USD';
  const [traffic, revenue] = await Promise.all([
    aiInteractionsByDay(db, period.start, period.end),
    revenueByDay(db, period.start, period.end),
  ]);
  const points = new Map<string, DailyPoint>();
  for (const date of daysOf(period)) {
    points.set(date, {
      date,
      interactions: { total: 0, assistant: 0, search: 0, training: 0, agent: 0 },
      bots: 0,
      humans: 0,
      conversions: 0,
      revenue: 0,
      other_currencies: [],
    });
  }
  for (const t of traffic) {
    const p = points.get(t.day);
    if (!p) continue;
    if (t.kind === 'bot') p.bots += t.interactions;
    else if (t.kind === 'human') p.humans += t.interactions;
    else {
      p.interactions[t.kind] += t.interactions;
      p.interactions.total += t.interactions;
    }
  }
  const revenueMinor = new Map<string, number>();
  for (const r of revenue) {
    const p = points.get(r.day);
    if (!p) continue;
    p.conversions += r.conversions;
    if (r.currency === currency) {
      revenueMinor.set(r.day, (revenueMinor.get(r.day) ?? 0) + r.amount_minor);
    } else {
      p.other_currencies.push({
        currency: r.currency,
        conversions: r.conversions,
        amount: fromMinorUnits(r.amount_minor, r.currency),
      });
    }
  }
  for (const [day, minor] of revenueMinor)
    points.get(day)!.revenue = fromMinorUnits(minor, currency);
  for (const p of points.values())
    p.other_currencies.sort((a, b) => (a.currency < b.currency ? -1 : 1));
  return [...points.values()];
}

export interface AgentBreakdown {
  /** AI agents, most interactions first. */
  agents: {
    agent: string | null;
    operator: string | null;
    kind: string;
    interactions: number;
    verified: number;
  }[];
  operators: { operator: string | null; interactions: number }[];
  kinds: { assistant: number; search: number; training: number; agent: number };
  /** Not AI interactions: other bots and people. */
  other: { bots: number; humans: number };
}

/** AI interactions of the period by agent, by operator and by kind; bots and people apart. */
export async function agentBreakdown(db: Executor, period: Period): Promise<AgentBreakdown> {
  return keptAnswer(db, `agents\u0000${period.start}\u0000${period.end}`, ['traffic'], () =>
    computeBreakdown(db, period),
  );
}

async function computeBreakdown(db: Executor, period: Period): Promise<AgentBreakdown> {
  const rows = await trafficByAgent(db, period.start, period.end);
  const result: AgentBreakdown = {
    agents: [],
    operators: [],
    kinds: { assistant: 0, search: 0, training: 0, agent: 0 },
    other: { bots: 0, humans: 0 },
  };
  const operators = new Map<string, number>();
  for (const r of rows) {
    if (r.kind === 'bot') {
      result.other.bots += r.interactions;
      continue;
    }
    if (r.kind === 'human') {
      result.other.humans += r.interactions;
      continue;
    }
    result.kinds[r.kind] += r.interactions;
    result.agents.push({
      agent: r.agent || null,
      operator: r.operator || null,
      kind: r.kind,
      interactions: r.interactions,
      verified: r.verified,
    });
    operators.set(r.operator, (operators.get(r.operator) ?? 0) + r.interactions);
  }
  const byCount =
    <T extends { interactions: number }>(key: (t: T) => string) =>
    (a: T, b: T) =>
      b.interactions - a.interactions || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  result.agents.sort(byCount((a) => `${a.agent ?? ''}\u0000${a.kind}`));
  result.operators = [...operators.entries()]
    .map(([operator, interactions]) => ({ operator: operator || null, interactions }))
    .sort(byCount((o) => o.operator ?? ''));
  return result;
}

export const PRODUCT_SORTS: readonly ProductSort[] = [
  'interactions',
  'views',
  'clicks',
  'conversions',
  'revenue',
];

export interface ProductAnalytics {
  product_id: string;
  /** The product's name now; null when it was deleted since. */
  name: string | null;
  interactions: {
    total: number;
    assistant: number;
    search: number;
    training: number;
    agent: number;
  };
  views: number;
  clicks: number;
  conversions: number;
  revenue: number;
  other_currencies: OtherCurrency[];
  /** Its revenue in every currency it sold in (revenueByCurrency). */
  revenue_by_currency: Record<string, number>;
}

/** Products of a period whose totals are computed at once and kept (productAnalytics). */
const TOP_KEPT = 1000;

/**
 * Per product with any activity in the period (interactions naming it, views, clicks,
 * conversions): its totals, sorted by `sort` descending (then by id), a page at a time.
 */
export async function productAnalytics(
  db: Executor,
  period: Period,
  page: { limit: number; offset: number; sort?: ProductSort | undefined },
  options: MetricOptions = {},
) {
  const currency = options.currency ?? 'USD';
  const sort = page.sort ?? 'interactions';
  // The first TOP_KEPT products of a period and sort are computed together (the grouping costs
  // the same for 20 or 1,000) and kept, so paging through them costs one aggregation.
  const inTop = page.offset + page.limit <= TOP_KEPT;
  const window = inTop ? { limit: TOP_KEPT, offset: 0 } : page;
  const kept = await keptAnswer(
    db,
    `products\u0000${period.start}\u0000${period.end}\u0000${sort}\u0000${window.limit}\u0000${window.offset}\u0000${currency}`,
    ['products'],
    async () => {
      const totals = await productTotalsPage(db, period.start, period.end, {
        sort,
        limit: window.limit,
        offset: window.offset,
      });
      const other = await otherCurrencyRevenue(
        db,
        period.start,
        period.end,
        currency,
        totals.rows.map((r) => r.product_id),
      );
      return { ...totals, other };
    },
  );
  const { total, other } = kept;
  const rows = inTop ? kept.rows.slice(page.offset, page.offset + page.limit) : kept.rows;
  // Names are the catalogue's now: read each time (a page's worth).
  const names = await productNames(
    db,
    rows.map((r) => r.product_id),
  );
  const products: ProductAnalytics[] = rows.map((r) =>
    withRevenueByCurrency(currency, {
      product_id: r.product_id,
      name: names.get(r.product_id) ?? null,
      interactions: {
        total: r.interactions,
        assistant: r.assistant,
        search: r.search,
        training: r.training,
        agent: r.agent,
      },
      views: r.views,
      clicks: r.clicks,
      conversions: r.conversions,
      revenue: fromMinorUnits(r.revenue_minor, currency),
      other_currencies: other
        .filter((o) => o.product_id === r.product_id)
        .sort((a, b) => (a.currency < b.currency ? -1 : 1))
        .map((o) => ({
          currency: o.currency,
          conversions: o.conversions,
          amount: fromMinorUnits(o.amount_minor, o.currency),
        })),
    }),
  );
  return {
    period: presentPeriod(period),
    currency,
    products,
    pagination: presentPagination(page, products.length, total),
  };
}
