import {
  AnalyticsEventInput,
  AnalyticsQuery,
  PeriodQuery,
  ProductSortField,
  RevenueByCurrency,
} from '../../domain/analytics/schemas.js';
import { z } from 'zod';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** GET /v1/analytics/products: the period, a page, and the order. */
export const ProductAnalyticsQueryString = PeriodQuery.extend({
  ...pageQuery,
  sort: ProductSortField.default('interactions'),
});

/** GET /v1/analytics/searches: the period, and how many queries of each list. */
export const SearchAnalyticsQueryString = PeriodQuery.extend({
  limit: z.coerce.number<string>().int().min(1).max(100).default(20),
});

export { AnalyticsQuery as AnalyticsQueryString, PeriodQuery as PeriodQueryString };

doc(
  RevenueByCurrency,
  'Revenue in every currency, each summed on its own, by ISO 4217 code: {"EUR": 119, "USD": 359.98}; the default currency is there when it has revenue or nothing else has',
);
doc(ProductSortField, 'The total to sort by, largest first (then by product id)');
docFields(PeriodQuery, {
  start_date:
    'First day of the period (a date, or a date-time taken as its UTC day). Default: 29 days before end_date',
  end_date: 'Last day of the period, included. Default: today (UTC), or 29 days after start_date',
});
docFields(AnalyticsQuery, {
  metric:
    'Restrict the answer to one metric (and its trend): total_products, ai_interactions, discovery_rate, conversion_rate or revenue',
});
docFields(
  AnalyticsEventInput,
  {
    id: 'Your id for the event: an event with an id already stored is a retry and adds nothing',
    type: 'view, click or conversion',
    product_id: 'The product the event is about (it must exist)',
    occurred_at: 'When it happened (ISO 8601 with a zone); default now; not in the future',
    agent: 'The AI agent involved (ChatGPT-User, or your own agent name), if known',
    amount:
      'Conversions only, required: the amount as a decimal in currency (19.99), no more decimals than the currency has',
    currency:
      'Conversions only, required: ISO 4217. Amounts in a currency other than DEFAULT_CURRENCY are reported apart, never summed into revenue',
  },
  { id: 'AnalyticsEvent', description: 'One interaction reported by the merchant' },
);
docFields(SearchAnalyticsQueryString, {
  limit: 'How many queries each list holds (1-100, default 20)',
});
