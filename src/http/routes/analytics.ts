import { prepareEvents } from '../../domain/analytics/events.js';
import { recordEvents } from '../../domain/analytics/interactions.js';
import {
  agentBreakdown,
  analyticsOverview,
  dailySeries,
  presentPeriod,
  productAnalytics,
  resolvePeriod,
  type MetricName,
} from '../../domain/analytics/metrics.js';
import {
  AiInteractionsResponse,
  AnalyticsEventsBody,
  AnalyticsEventsResult,
  AnalyticsResponse,
  ConversionsResponse,
  ProductAnalyticsPage,
  SearchAnalyticsResponse,
} from '../../domain/analytics/schemas.js';
import { searchAnalytics } from '../../domain/analytics/searches.js';
import type { ProductSort } from '../../db/queries/analytics.js';
import { defineRoute, type RouteDeps } from '../route.js';
import {
  AnalyticsQueryString,
  PeriodQueryString,
  ProductAnalyticsQueryString,
  SearchAnalyticsQueryString,
} from '../schemas/analytics.js';
import { ErrorResponses } from './shared.js';

const options = (deps: RouteDeps) => ({
  currency: deps.config.DEFAULT_CURRENCY,
  storeName: deps.config.STORE_NAME,
});

function overviewRoute(path: string, operationId: string, summary: string) {
  return defineRoute({
    method: 'get',
    path,
    operationId,
    summary,
    tag: 'Analytics',
    permission: 'read',
    query: AnalyticsQueryString,
    responses: {
      200: { description: 'The metrics of the period', schema: AnalyticsResponse },
      ...ErrorResponses,
    },
    handler: async ({ query }, deps) => {
      const period = resolvePeriod(query, deps.now());
      const analytics = await analyticsOverview(deps.db, period, {
        ...options(deps),
        metric: query.metric as MetricName | undefined,
      });
      return { body: { analytics } };
    },
  });
}

export const analyticsRoutes = [
  overviewRoute(
    '/v1/analytics',
    'getAnalytics',
    'Metrics of a period (default the last 30 UTC days): total_products, ai_interactions, discovery_rate, conversion_rate, revenue, with daily averages and growth against the previous period',
  ),
  overviewRoute('/v1/analytics/overview', 'getAnalyticsOverview', 'The same as GET /v1/analytics'),
  defineRoute({
    method: 'get',
    path: '/v1/analytics/products',
    operationId: 'listProductAnalytics',
    summary:
      'Per product with activity in the period: AI interactions by kind, views, clicks, conversions, revenue; sorted, paginated',
    tag: 'Analytics',
    permission: 'read',
    query: ProductAnalyticsQueryString,
    responses: {
      200: { description: 'A page of products', schema: ProductAnalyticsPage },
      ...ErrorResponses,
    },
    handler: async ({ query }, deps) => {
      const period = resolvePeriod(query, deps.now());
      const page = { limit: query.limit, offset: query.offset, sort: query.sort as ProductSort };
      return { body: await productAnalytics(deps.db, period, page, options(deps)) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/analytics/ai-interactions',
    operationId: 'getAiInteractionAnalytics',
    summary:
      'AI interactions of the period: a daily series by kind (other bots and people apart) and a breakdown by agent, operator and kind',
    tag: 'Analytics',
    permission: 'read',
    query: PeriodQueryString,
    responses: {
      200: { description: 'Series and breakdown', schema: AiInteractionsResponse },
      ...ErrorResponses,
    },
    handler: async ({ query }, deps) => {
      const period = resolvePeriod(query, deps.now());
      const [series, breakdown] = await Promise.all([
        dailySeries(deps.db, period, options(deps)),
        agentBreakdown(deps.db, period),
      ]);
      const total = series.reduce((n, p) => n + p.interactions.total, 0);
      return { body: { period: presentPeriod(period), total, series, breakdown } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/analytics/conversions',
    operationId: 'getConversionAnalytics',
    summary:
      'Conversions of the period: totals, conversion rate and a daily series with revenue in DEFAULT_CURRENCY; other currencies apart',
    tag: 'Analytics',
    permission: 'read',
    query: PeriodQueryString,
    responses: {
      200: { description: 'Totals and series', schema: ConversionsResponse },
      ...ErrorResponses,
    },
    handler: async ({ query }, deps) => {
      const period = resolvePeriod(query, deps.now());
      const [series, overview] = await Promise.all([
        dailySeries(deps.db, period, options(deps)),
        analyticsOverview(deps.db, period, { ...options(deps), metric: 'revenue' }),
      ]);
      const conversions = series.reduce((n, p) => n + p.conversions, 0);
      const interactions = series.reduce((n, p) => n + p.interactions.total, 0);
      return {
        body: {
          period: presentPeriod(period),
          currency: overview.currency,
          conversions,
          revenue: overview.metrics.revenue ?? 0,
          conversion_rate:
            interactions === 0 ? 0 : Math.round((conversions / interactions) * 1e6) / 1e6,
          other_currencies: overview.other_currencies ?? [],
          revenue_by_currency: overview.metrics.revenue_by_currency ?? {},
          series: series.map((p) => ({
            date: p.date,
            conversions: p.conversions,
            revenue: p.revenue,
            other_currencies: p.other_currencies,
          })),
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/analytics/searches',
    operationId: 'getSearchAnalytics',
    summary:
      'What agents searched the UCP catalog for in the period: the queries searched most, and the queries that most often found nothing (lower-cased, spaces collapsed)',
    tag: 'Analytics',
    permission: 'read',
    query: SearchAnalyticsQueryString,
    responses: {
      200: { description: 'The two lists', schema: SearchAnalyticsResponse },
      ...ErrorResponses,
    },
    handler: async ({ query }, deps) => {
      const period = resolvePeriod(query, deps.now());
      const lists = await searchAnalytics(deps.db, period, query.limit);
      return { body: { period: presentPeriod(period), ...lists } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/analytics/events',
    operationId: 'recordAnalyticsEvents',
    summary:
      'Report views, clicks and conversions: one event, or up to 1,000 as {events: [...]}; all or nothing; an event id already stored is a retry and adds nothing',
    tag: 'Analytics',
    permission: 'write',
    body: AnalyticsEventsBody,
    idempotent: true,
    responses: {
      200: { description: 'Stored', schema: AnalyticsEventsResult },
      ...ErrorResponses,
    },
    handler: async ({ body }, deps) => {
      const batch = 'events' in body;
      const input = batch ? body.events : [body];
      const events = await prepareEvents(deps.db, input, { now: deps.now(), batch });
      const result = await recordEvents(deps.db, events, options(deps));
      return { body: { received: input.length, ...result } };
    },
  }),
];
